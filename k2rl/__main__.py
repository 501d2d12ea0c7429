import sys

from k2rl.cli import main

sys.exit(main())
