"""The shared helpers: numpy values as plain Python values."""

import json

import numpy as np

from sdwec._util import plain, plain_json


def test_plain_unwraps_numpy_scalars_only():
    assert plain(np.int64(4)) == 4 and type(plain(np.int64(4))) is int
    assert type(plain(np.float32(0.5))) is float and type(plain(np.bool_(True))) is bool
    assert type(plain(np.str_("M"))) is str
    array = np.arange(3)
    assert plain(array) is array and plain("M") == "M" and plain(None) is None


def test_plain_json_gives_json_data():
    value = {1: np.int64(2), "w": np.array([0.5, np.nan]), "t": (np.inf, "a"),
             "ok": np.bool_(False), "none": None, "obj": object}
    out = plain_json(value)
    assert out == {"1": 2, "w": [0.5, None], "t": [None, "a"], "ok": False, "none": None,
                   "obj": str(object)}
    assert type(out["1"]) is int and type(out["ok"]) is bool
    json.dumps(out, allow_nan=False)  # strict JSON: no NaN left
