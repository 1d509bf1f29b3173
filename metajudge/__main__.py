import sys

from metajudge.cli import main

sys.exit(main())
