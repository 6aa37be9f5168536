import sys

from validation.run import main

sys.exit(main())
