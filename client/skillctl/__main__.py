import sys

from skillctl.cli.main import main

sys.exit(main())
