"""Python threads run modules at once (the GIL is released while compiling and running)."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import kiln
import models


def test_concurrent_runs_of_one_module_are_correct():
    proto, ref = models.mlp(batch=8, features=16, hidden=8)
    module = kiln.compile(proto).load()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((8, 16)).astype(np.float32) for _ in range(64)]

    def work(x):
        return [module(x) for _ in range(20)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, xs))
    for x, outs in zip(xs, results):
        for out in outs:
            np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-5)


def test_compile_releases_the_gil():
    proto, _ = models.mlp(batch=4, features=32, hidden=32)
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        arts = []
        with ThreadPoolExecutor(max_workers=2) as pool:
            arts = list(pool.map(lambda _: kiln.compile(proto), range(2)))
    finally:
        done.set()
        t.join()
    assert len(arts) == 2
    # Compiling takes >= 100 ms; a thread holding the GIL would starve the ticker.
    assert len(ticks) > 20
