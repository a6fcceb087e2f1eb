# pytest setup for the knead Python module's tests (tests/python): ctest runs them with
# PYTHONPATH=<build>/python and KNEAD_CLI=<build>/knead (tests/CMakeLists.txt).
import os

import pytest

SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def source_dir():
    return SOURCE_DIR
