import numpy as np
import pytest

import fastcredit as fc

BACKENDS = fc.available_backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(20261130)
