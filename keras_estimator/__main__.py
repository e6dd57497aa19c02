"""`python -m keras_estimator ...`"""

import sys

from keras_estimator.cli.main import main

sys.exit(main())
