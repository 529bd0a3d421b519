"""Tensors from Python: creation, every dtype, operators and reductions against NumPy, views, errors as
Python's built-in kinds, and waits that release the GIL and give way to Ctrl-C."""
import os
import re
import signal
import threading
import time

import pytest

import plexus
from conftest import need

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "float16"]


def test_creation_and_attributes():
    np = need("numpy")
    assert plexus.zeros((2, 3)).tolist() == [[0.0] * 3] * 2
    assert plexus.ones(4, dtype="int32").tolist() == [1, 1, 1, 1]
    assert plexus.full((2,), 7.5, dtype="float64").tolist() == [7.5, 7.5]
    assert plexus.arange(3, dtype="int64").tolist() == [0, 1, 2]
    assert plexus.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert plexus.empty((0, 4)).shape == (0, 4)
    x = plexus.array(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert x.dtype == np.int32 and x.dtype == "int32" and x.shape == (2, 3) and x.ndim == 2 and len(x) == 2
    assert plexus.array([1, 2]).dtype == np.float32  # lists are float32, as in MXNet
    assert plexus.array([1, 2], dtype=np.int64).dtype == np.int64
    assert plexus.array(x).dtype == np.int32 and plexus.array(x).tolist() == x.tolist()
    plexus.seed(5)
    u = plexus.random.uniform(-1, 1, (1000,)).asnumpy()
    assert u.min() >= -1 and u.max() < 1 and abs(u.mean()) < 0.1
    plexus.seed(5)
    assert (plexus.random.uniform(-1, 1, (1000,)).asnumpy() == u).all()  # seeded: reproducible
    n = plexus.random.normal(3, 2, (4000,), dtype="float64").asnumpy()
    assert abs(n.mean() - 3) < 0.15 and abs(n.std() - 2) < 0.15


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_in_and_out_of_numpy(dtype):
    np = need("numpy")
    values = np.array([0, 1, 2, 100, 127, 3], dtype=dtype).reshape(2, 3)
    t = plexus.array(values)
    assert t.dtype == np.dtype(dtype)
    back = t.asnumpy()
    assert back.dtype == np.dtype(dtype) and (back == values).all()
    assert (np.asarray(t) == values).all() and np.asarray(t, dtype=np.float64).dtype == np.float64
    assert t[1].tolist() == values[1].tolist()
    assert type(t[0][1].item()) is (float if dtype.startswith("float") else int)


def test_half_precision_rounds_once_and_reads_back_exactly():
    np = need("numpy")
    values = np.array([1 / 3, 65519.0, 65520.0, 2.0 ** -25 * 3, -0.0, np.nan])
    t = plexus.array(values, dtype="float16")  # float64 values, rounded once on the device
    assert (t.asnumpy().view(np.uint16) == values.astype(np.float16).view(np.uint16)).all()
    b = plexus.array(values, dtype="bfloat16")
    assert b.dtype == "bfloat16" and str(b).endswith("<Tensor 6 bfloat16 @cpu(0)>")
    assert b.tolist()[:2] == [0.333984375, 65536.0]  # float32's view of bfloat16, exact
    assert plexus.array(b).dtype == "bfloat16"  # a tensor's dtype is kept
    assert plexus.zeros(3, dtype="bfloat16").astype("float16").dtype == np.float16
    assert str(plexus.array([0.1, 0.5, 2.0], dtype="float16")).startswith("[0.1 0.5 2. ]")
    with pytest.raises(plexus.DTypeError, match="bfloat16 has no NumPy type"):
        np.asarray(b)


def test_operators_and_functions_against_numpy():
    np = need("numpy")
    rng = np.random.default_rng(1)
    a_np = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
    b_np = rng.uniform(0.5, 2, (4,)).astype(np.float32)
    a, b = plexus.array(a_np), plexus.array(b_np)
    close = lambda t, ref: np.testing.assert_allclose(t.asnumpy(), ref, rtol=2e-6, atol=1e-6)
    close(a + b, a_np + b_np)
    close(a - b, a_np - b_np)
    close(a * b, a_np * b_np)
    close(a / b, a_np / b_np)
    close(a ** 2, a_np ** 2)
    close(2 ** a, 2 ** a_np)
    close(a ** b, a_np ** b_np)
    close(1 - a, 1 - a_np)
    close(3 / a, 3 / a_np)
    close(-a, -a_np)
    close(abs(-a), a_np)
    close(a @ a.T, a_np @ a_np.T)
    for name in ("exp", "log", "sqrt", "abs", "relu", "sigmoid", "tanh"):
        refs = {"relu": lambda v: np.maximum(v, 0), "sigmoid": lambda v: 1 / (1 + np.exp(-v))}
        ref = refs[name] if name in refs else getattr(np, name)
        close(getattr(plexus, name)(a - 1), ref(a_np - 1))
    assert ((a > 1).asnumpy() == (a_np > 1)).all() and (a > 1).dtype == np.uint8
    assert ((a <= b).asnumpy() == (a_np <= b_np)).all()
    assert ((a == a).asnumpy() == 1).all() and ((a != a).asnumpy() == 0).all()
    for name in ("sum", "mean", "max", "min"):
        close(getattr(a, name)(), getattr(a_np, name)())
        close(getattr(a, name)(axis=1), getattr(a_np, name)(axis=1))
        close(getattr(a, name)(axis=0, keepdims=True), getattr(a_np, name)(axis=0, keepdims=True))
    assert (a.argmax(axis=1).asnumpy() == a_np.argmax(axis=1)).all()
    close(a.T, a_np.T)
    close(a.transpose(1, 0), a_np.T)
    close(a.reshape((4, 3)), a_np.reshape(4, 3))
    close(a[1:3], a_np[1:3])
    close(a[::2], a_np[::2])
    close(a[-1], a_np[-1])
    close(a.astype("float64"), a_np.astype(np.float64))
    assert a.astype(np.int32).dtype == np.int32
    close(plexus.where(a > 1, a, b), np.where(a_np > 1, a_np, b_np))


def test_errors_are_plexus_types_and_builtin_kinds():
    a = plexus.ones((2, 3))
    with pytest.raises(plexus.ShapeError) as e:
        a + plexus.ones((4,))
    assert isinstance(e.value, ValueError) and isinstance(e.value, plexus.Error)
    assert "px_binary: add: shapes (2, 3) and (4,) cannot be broadcast together" in str(e.value)
    with pytest.raises(plexus.DTypeError) as e:
        a.astype("complex64")
    assert isinstance(e.value, TypeError) and "'complex64' is not a Plexus dtype" in str(e.value)
    with pytest.raises(TypeError) as e:
        plexus.ones(3, dtype="int32") @ plexus.ones(3, dtype="int32").reshape(3, 1).astype("float32")
    assert "x.astype('float32') in Python" in str(e.value)  # the Python call, to the float dtype
    # Values that are not numbers: refused by name (NumPy would parse text; it was pybind11's internal error),
    # and objects NumPy cannot convert with NumPy's refusal.
    np = need("numpy")
    for make in (lambda: plexus.array(np.array(["cat", "dog"])),
                 lambda: plexus.data.ArrayDataset(np.zeros((2, 3), np.float32), np.array(["cat", "dog"]))):
        with pytest.raises(plexus.DTypeError, match="array: the values are not real numbers: text"):
            make()
    with pytest.raises(plexus.DTypeError, match="NumPy cannot convert values of dtype object to float32"):
        plexus.array([object(), 1])
    with pytest.raises(plexus.DeviceMismatchError) as e:
        a + plexus.ones((2, 3), device=plexus.cpu(1))
    assert "x.copyto(cpu(0)) or x.as_in_context(cpu(0)) in C++ and Python" in str(e.value)
    with pytest.raises(plexus.OutOfMemoryError) as e:
        plexus.empty((1 << 45,), dtype="float64")  # 256 TiB
    assert isinstance(e.value, MemoryError)
    with pytest.raises(plexus.PluginError) as e:
        plexus.ones(2, device=plexus.Device("accel", 7))
    assert isinstance(e.value, RuntimeError) and "accel(7)" in str(e.value)
    # Device strings, and kinds that plugins name (none here but cpu and gpu).
    assert plexus.Device.parse("cpu:1") == plexus.cpu(1) and plexus.Device.parse("gpu(2)") == plexus.gpu(2)
    with pytest.raises(plexus.PluginError) as e:
        plexus.Device("tpu", 0)
    assert "'tpu:0': no plugin of this runtime gives 'tpu' devices (it has cpu" in str(e.value)
    with pytest.raises(plexus.InvalidArgumentError) as e:
        plexus.Device.parse("cpu:x")
    assert "'cpu:x' does not name a device: the index 'x' is not a whole number" in str(e.value)
    with pytest.raises(ValueError):
        plexus.Device("tpu", -1)
    with pytest.raises(plexus.ShapeError):
        plexus.ones((2, 2)).item()
    with pytest.raises(IndexError):
        plexus.ones((2, 2))[5]
    with pytest.raises(ValueError):
        bool(plexus.ones(3))
    with pytest.raises(ValueError):
        plexus.ones(2, device=plexus.cpu(0), ctx=plexus.cpu(1))


def test_a_failure_on_the_device_is_a_device_error_at_the_wait():
    zero = plexus.zeros(4, dtype="int32")
    quotient = plexus.ones(4, dtype="int32") // zero  # integer division by zero fails on the device
    with pytest.raises(plexus.DeviceError) as e:
        quotient.asnumpy()
    assert isinstance(e.value, RuntimeError) and "div" in str(e.value)


def _long_work():
    """Queued work that takes the CPU device seconds: 2048x2048 products, chained (each gives the
    same matrix of 1/2048s back, so no value under- or overflows)."""
    x = plexus.full((2048, 2048), 1.0 / 2048)
    for _ in range(12):
        x = x @ x
    return x


def test_a_wait_releases_the_gil_and_ctrl_c_interrupts_it():
    x = _long_work()
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            x.asnumpy()
        interrupted_after = time.monotonic() - start
    finally:
        stop.set()
        t.join()
        timer.cancel()
    # Ctrl-C came at 0.5 s; the wait gave way within the waiter's poll (50 ms, more on a loaded machine)...
    assert interrupted_after < 3.0, interrupted_after
    # ... while the work was still running: waiting for it now still takes a while.
    plexus.waitall()  # the abandoned wait's work finishes; the runtime stays usable
    assert time.monotonic() - start > interrupted_after + 0.2
    # Another Python thread ran while the main thread waited.
    assert len([s for s in ticks if s - start < 0.5]) >= 3
    assert plexus.ones(2).sum().item() == 2.0


def test_a_failure_behind_a_wait_ctrl_c_ended_is_reported_by_the_next_wait():
    # The abandoned wait had finished on a helper thread, taken the failure and dropped it: every later
    # wait said nothing and the failed division read as zeros.
    q = plexus.array([7, 7, 7], dtype="int32") // plexus.zeros(3, dtype="int32")
    x = _long_work()
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            x.asnumpy()
    finally:
        timer.cancel()
    time.sleep(0.2)
    with pytest.raises(plexus.DeviceError, match="div failed on cpu\\(0\\): integer division by zero"):
        plexus.waitall()
    plexus.waitall()  # once


def test_a_wait_on_one_device_does_not_queue_behind_another_threads_wait_on_another():
    # Every thread's waits had run one after another on one helper thread: a read of two elements on an idle
    # cpu(1) took as long as another thread's wait for seconds of work on cpu(0).
    small = plexus.array([1.0, 2.0], device=plexus.cpu(1))
    small.asnumpy()
    x = _long_work()
    waited = []
    t = threading.Thread(target=lambda: (x.asnumpy(), waited.append(time.monotonic())))
    t.start()
    time.sleep(0.3)
    start = time.monotonic()
    assert (small + 1).tolist() == [2.0, 3.0]
    read_at = time.monotonic()
    t.join()
    assert waited and read_at < waited[0], (read_at - start, waited[0] - start)


def test_ctrl_c_interrupts_saves_metrics_and_gradient_checks_waiting_for_the_device(tmp_path):
    from plexus import nn
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize()
    trainer = nn.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.0})
    with plexus.autograd.record():
        loss = net(plexus.ones((1, 2))).sum()
    loss.backward()
    grad = net[0].weight.grad()
    calls = {"save_parameters": lambda: net.save_parameters(str(tmp_path / "p")),
             "save": lambda y: plexus.save(str(tmp_path / "t"), y),
             "clip_global_norm": lambda y: nn.clip_global_norm([grad, y], 1.0),
             "step_if_finite": lambda: trainer.step_if_finite(1),
             "metric.get": lambda y: _metric_of(y).get()}
    for name, call in calls.items():
        y = _long_work()  # seconds of queued work; each call waits for it (they had waited it out)
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                call(y) if call.__code__.co_argcount else call()
            assert time.monotonic() - start < 3.0, name
        finally:
            timer.cancel()
        plexus.waitall()


def test_a_save_waits_for_its_own_devices_and_leaves_another_devices_failure_for_its_wait(tmp_path):
    from plexus import nn
    net = nn.Sequential()
    net.add(nn.Dense(2, in_units=2))
    net.initialize(device=plexus.cpu(0))
    bad = plexus.ones(2, dtype="int32", device=plexus.cpu(1)) // plexus.zeros(2, dtype="int32", device=plexus.cpu(1))
    net.save_parameters(str(tmp_path / "p"))  # it had raised cpu(1)'s failure and cleared it
    assert (tmp_path / "p").stat().st_size > 0
    with pytest.raises(plexus.DeviceError, match="cpu\\(1\\)"):
        bad.asnumpy()


def _metric_of(y):
    m = plexus.metric.Accuracy()
    m.update(plexus.zeros(2048, dtype="int32"), y)
    return m


def test_a_forked_child_reads_values_with_waiter_and_runtime_of_its_own():
    before = plexus.full((3,), 2.0)
    assert before.sum().item() == 6.0  # the parent's waiter thread exists now
    pid = os.fork()
    if pid == 0:  # the child: no thread of the parent's is here
        try:
            ok = plexus.ones(4).sum().item() == 4.0 and plexus.arange(3).tolist() == [0.0, 1.0, 2.0]
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert before.sum().item() == 6.0  # and the parent goes on


def test_trace_writes_chrome_json_and_a_summary(tmp_path):
    import json
    path = str(tmp_path / "step.json")
    a = plexus.ones((4, 4))
    with plexus.trace(path):
        with plexus.trace_region("step"):
            b = (a + a) * 2
            assert b.tolist()[0][0] == 4.0
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    ops = [e["name"] for e in events if e.get("ph") == "X" and e["pid"] == 0 and e["cat"] == "op"]
    assert ops == ["add", "mul"]
    assert any(e.get("cat") == "region" and e["name"] == "step" for e in events)
    with open(str(tmp_path / "step.summary.txt"), encoding="utf-8") as f:
        assert f.read().startswith("Plexus trace: ")
    with pytest.raises(Exception, match="cannot write the trace to '/nonexistent-folder/t.json'"):
        with plexus.trace("/nonexistent-folder/t.json"):
            pass


def test_every_unary_op_of_the_op_table_is_a_method_and_a_function():
    # Made from the table's rows (python/src/module.cpp): a new row needs no binding.
    names = plexus._plexus._unary_ops
    assert {"neg", "exp", "sqrt", "relu", "tanh", "gelu"} <= set(names)
    x = plexus.array([0.25, 4.0])
    import builtins
    for name in names:
        # In `from plexus import *` but for those named like Python's builtins (abs, round), as sum and max.
        assert (name in plexus.__all__) != hasattr(builtins, name), name
        assert getattr(plexus, name)(x).tolist() == getattr(x, name)().tolist(), name
    assert plexus.neg(x).tolist() == [-0.25, -4.0]
    assert plexus.sqrt(x).tolist() == [0.5, 2.0]
    assert not hasattr(plexus, "_name")


def test_no_unary_op_of_the_op_table_replaces_a_name_of_the_module():
    # plexus/__init__.py sets one module function per unary row: a row named
    # like a name the module defines or imports itself would replace that name.
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(plexus))
    own = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            own.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            own.update(t.id for t in node.targets if isinstance(t, ast.Name))
    assert {"array", "take", "leaky_relu", "random", "Tensor"} <= own  # the parse found the module's names
    assert not own & set(plexus._plexus._unary_ops)


def test_an_index_other_than_an_int_or_a_slice_is_an_index_error_naming_the_alternatives():
    np = need("numpy")
    a = plexus.arange(12).reshape(3, 4)
    assert a[np.int64(1)].asnumpy().tolist() == [4.0, 5.0, 6.0, 7.0]  # anything with __index__
    for key in [True, False, (True, 0), (0, False), np.True_, (np.False_, 0), np.array(True)]:  # NumPy adds an axis
        with pytest.raises(IndexError, match="a bool is not an index here"):
            a[key]
        with pytest.raises(IndexError, match="a bool is not an index here"):
            a[key] = 1.0
    assert a.asnumpy().tolist() == np.arange(12.0).reshape(3, 4).tolist()
    for key, kind in [(1.5, "float"), ("a", "str"), ((0, {}), "dict")]:  # (None and arrays: test_indexing.py)
        with pytest.raises(IndexError, match="indexed by ints, slices, '...', None and arrays of indices, not by a " + kind):
            a[key]
    assert a[a > 5].tolist() == [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]  # a comparison masks, as MXNet's bool
    assert plexus.array([True, False]).dtype == np.uint8
    assert a[...].is_(a)
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        a[-4]


def test_true_division_of_integer_tensors_is_numpys():
    np = need("numpy")
    i, j = plexus.arange(-3, 4, dtype="int32"), plexus.array([2, -2, 3, 1, 5, -4, 2], dtype="int64")
    ni, nj = i.asnumpy(), j.asnumpy()
    for got, want in [(i / 2, ni / 2), (7 / plexus.array([2, 4], dtype="uint8"), 7 / np.array([2, 4], np.uint8)),
                      (i / j.astype("int32"), ni / nj.astype(np.int32)), (j / j, nj / nj), (i / 0.5, ni / 0.5)]:
        assert got.dtype == "float64" and got.asnumpy().tolist() == want.tolist()
    f = plexus.arange(4, dtype="float32")
    assert (f / 2).dtype == "float32" and (f / 2).asnumpy().tolist() == [0, 0.5, 1, 1.5]
    q = f / plexus.arange(1, 5, dtype="int32")  # two dtypes: the float's (docs/semantics.md)
    assert q.dtype == "float32"
    np.testing.assert_allclose(q.asnumpy(), [0, 0.5, 2 / 3, 0.75], rtol=1e-7)


def test_floor_division_of_integer_tensors_is_numpys():
    np = need("numpy")
    a = plexus.array([-7, -6, -1, 0, 1, 6, 7, 9], dtype="int32")
    b = plexus.array([2, -2, 3, -4, 4, -5, 7, -2], dtype="int32")
    na, nb = a.asnumpy(), b.asnumpy()
    for got, want in [(a // b, na // nb), (a // 2, na // 2), (a // -3, na // -3), (-7 // b, -7 // nb),
                      (a.astype("int64") // b.astype("int64"), na.astype(np.int64) // nb.astype(np.int64)),
                      (plexus.array([7, 200], dtype="uint8") // 3, np.array([7, 200], np.uint8) // 3)]:
        assert got.dtype == want.dtype and got.asnumpy().tolist() == want.tolist()
    with pytest.raises(plexus.DTypeError, match="// takes integer tensors, got float32 and float32"):
        plexus.ones(2) // plexus.ones(2)
    with pytest.raises(plexus.DTypeError, match=r"// takes integers, got 0\.5"):
        a // 0.5


def test_random_takes_numpys_size_as_well_as_shape():
    assert plexus.random.uniform(size=(2, 3)).shape == (2, 3)
    assert plexus.random.normal(0, 1, size=4).shape == (4,)
    assert plexus.random.uniform(0, 1, (3,)).shape == (3,)
    assert plexus.random.normal().shape == (1,)
    with pytest.raises(TypeError, match="not both"):
        plexus.random.uniform(shape=(2,), size=(2,))


def test_as_in_context_gives_the_same_object_when_the_tensor_is_there():
    z = plexus.ones(3)
    assert z.as_in_ctx(plexus.cpu()) is z and z.as_in_context(plexus.cpu(0)) is z  # d2l: Z.as_in_ctx(ctx) is Z
    assert z.copyto(plexus.cpu()) is not z


def test_a_one_element_tensor_formats_as_its_number():
    x = plexus.array([1.5, 2.25])
    assert f"{x.sum():.2f}" == "3.75" and "{:>6.1f}".format(x[0]) == "   1.5"
    assert f"{x}" == str(x)
    with pytest.raises(TypeError, match="only a one-element tensor formats as a number"):
        f"{x:.2f}"


def test_dot_and_matmul_of_vectors_and_sums_over_several_axes_as_numpy():
    np, torch = need("numpy"), need("torch")
    from plexus import autograd
    rs = np.random.RandomState(4)
    v, w, a, b3 = (rs.rand(3), rs.rand(3), rs.rand(2, 3), rs.rand(4, 3, 2))
    P = lambda x: plexus.array(x.astype(np.float32))
    for got, want in [(plexus.dot(P(v), P(w)), np.dot(v, w)), (P(a) @ P(v), a @ v), (P(v) @ P(a.T), v @ a.T),
                      (P(v) @ P(b3), v @ b3), (P(b3.transpose(0, 2, 1)) @ P(v), b3.transpose(0, 2, 1) @ v)]:
        assert got.shape == want.shape
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    x = P(rs.rand(2, 3, 4))
    np.testing.assert_allclose(x.sum(axis=(0, 1)).asnumpy(), x.asnumpy().sum(axis=(0, 1)), rtol=1e-5)
    np.testing.assert_allclose(x.mean(axis=[0, 2], keepdims=True).asnumpy(),
                               x.asnumpy().mean(axis=(0, 2), keepdims=True), rtol=1e-5)
    with pytest.raises(TypeError, match="axis is an int, a tuple or list of ints, or None"):
        x.sum(axis="0")
    # The gradients of a vector product, against PyTorch's.
    pa, pv = P(a), P(v)
    pa.attach_grad()
    pv.attach_grad()
    with autograd.record():
        y = ((pa @ pv) * plexus.array([1.0, 2.0])).sum()
    y.backward()
    ta = torch.tensor(a.astype(np.float32), requires_grad=True)
    tv = torch.tensor(v.astype(np.float32), requires_grad=True)
    ((ta @ tv) * torch.tensor([1.0, 2.0])).sum().backward()
    np.testing.assert_allclose(pa.grad.asnumpy(), ta.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(pv.grad.asnumpy(), tv.grad.numpy(), rtol=1e-5)


def test_numpy_reductions_of_a_tensor_and_dot_beyond_matrices():
    np = need("numpy")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = plexus.array(x)
    # NumPy calls t.sum(axis=None, out=None) (and dtype= for mean): they had been pybind11's TypeError.
    assert np.sum(t) == 15.0 and np.mean(t) == 2.5 and np.max(t) == 5.0 and np.min(t) == 0.0
    np.testing.assert_array_equal(np.sum(t, axis=0), x.sum(axis=0))
    assert np.mean(t, dtype=np.float64).dtype == np.float64
    i = plexus.array([[1, 2], [3, 250]], dtype="uint8")
    assert i.sum(dtype="float32").dtype == np.float32 and i.sum(dtype="float32").item() == 256.0
    assert i.mean(axis=0, dtype="float64").tolist() == [2.0, 126.0]
    # An integer dtype= would accumulate otherwise than NumPy's (which wraps: uint8 gives 0 here).
    with pytest.raises(TypeError, match="sum: dtype= takes a float dtype, not uint8"):
        i.sum(dtype="uint8")
    with pytest.raises(TypeError, match=r"sum: out= is not supported; the result is a new tensor"):
        t.sum(out=plexus.zeros(()))
    for name in ("max", "min", "argmax"):
        with pytest.raises(TypeError, match=name + r": takes no dtype= \(as NumPy's\)"):
            getattr(t, name)(dtype="float64")
    # np.dot of stacks pairs every matrix with every other ((2, 3, 2, 5) here); a batched product had been given.
    with pytest.raises(plexus.ShapeError, match=r"dot: takes vectors and matrices, not \(2, 3, 4\) and \(2, 4, 5\)"
                                                r".*use matmul"):
        plexus.dot(plexus.ones((2, 3, 4)), plexus.ones((2, 4, 5)))
    assert plexus.matmul(plexus.ones((2, 3, 4)), plexus.ones((2, 4, 5))).shape == (2, 3, 5)
    # A zero-dimensional operand multiplies, as np.dot (it had been refused as matmul's).
    assert plexus.dot(plexus.array(2.0), plexus.array([1.0, 3.0])).tolist() == [2.0, 6.0]
    assert plexus.dot(plexus.ones((2, 2)), plexus.array(0.5)).tolist() == [[0.5, 0.5], [0.5, 0.5]]


def test_pick_reads_the_chosen_value_beside_infinities_and_nan():
    np = need("numpy")
    d = np.array([[0.5, -np.inf, 0.1], [np.nan, 2.0, 3.0]], dtype=np.float32)
    got = plexus.pick(plexus.array(d), plexus.array([0, 2], dtype="int32"))
    np.testing.assert_array_equal(got.asnumpy(), d[[0, 1], [0, 2]])  # had been [nan nan]
    assert plexus.pick(plexus.array([[7, 8]], dtype="int32"), plexus.array([1])).dtype == np.int32


def test_where_with_a_scalar_and_array_of_a_torch_tensor_keep_numpys_dtypes():
    np, torch = need("numpy"), need("torch")
    x = np.array([-1.5, 2.0, -3.0], dtype=np.float32)
    t = plexus.array(x)
    got = plexus.where(t > 0, t, 0.0)  # had been a TypeError
    np.testing.assert_array_equal(got.asnumpy(), np.where(x > 0, x, 0.0))
    assert got.dtype == np.float32
    i = plexus.array([1, -2], dtype="int32")
    assert plexus.where(i > 0, 0.5, i).tolist() == [0.5, -2.0]  # a fraction computes in float64, as NumPy's
    assert plexus.where(i > 0, 0.5, i).dtype == np.float64
    # Integers beyond 2**53 stay exact, as in the arithmetic (a double had rounded 2**53 + 1).
    big = plexus.array([1, 2], dtype="int64")
    assert plexus.where(plexus.array([1, 0], dtype="uint8"), big, 2 ** 53 + 1).tolist() == [1, 2 ** 53 + 1]
    assert plexus.where(plexus.array([1, 0], dtype="uint8"), [7, 8], big).tolist() == [7, 2]
    # A PyTorch tensor keeps its dtype as a NumPy array does (int64 had become float32: 2**40 + 1 lost its 1).
    big = plexus.array(torch.tensor([2 ** 40 + 1, 3]))
    assert big.dtype == np.int64 and big.tolist() == [2 ** 40 + 1, 3]
    assert plexus.array(torch.tensor([0.5], dtype=torch.float64)).dtype == np.float64
    # Through DLPack: bfloat16, and a tensor that requires grad (numpy() refuses both), copied.
    source = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    half = plexus.array(source)
    assert half.dtype == "bfloat16" and half.astype("float32").tolist() == [1.5, -2.0]
    source[0] = 9
    assert half.astype("float32").tolist() == [1.5, -2.0]
    assert plexus.array(torch.ones(2, dtype=torch.float64, requires_grad=True), dtype="float32").dtype == np.float32


def test_mxnet_and_numpy_spellings_of_joining_shaping_and_reducing_match_numpy():
    np = need("numpy")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = plexus.array(x), plexus.array(-x)
    assert (plexus.concat(a, b).asnumpy() == np.concatenate([x, -x], 1)).all()  # MXNet's nd.concat: dim 1
    assert (plexus.concat(a, b, dim=0).asnumpy() == np.concatenate([x, -x], 0)).all()
    assert (plexus.concat([a, b]).asnumpy() == np.concatenate([x, -x])).all()  # a list: NumPy's axis 0
    assert (plexus.concatenate((a, b), axis=1).asnumpy() == np.concatenate([x, -x], 1)).all()
    assert (plexus.stack([a, b], axis=1).asnumpy() == np.stack([x, -x], 1)).all()
    with pytest.raises(ValueError, match="dim=0 and axis=1 disagree"):
        plexus.concat(a, b, dim=0, axis=1)
    assert (plexus.clip(a, 1, 3.5).asnumpy() == np.clip(x, 1, 3.5)).all()
    assert a.expand_dims(1).shape == (2, 1, 3) and plexus.expand_dims(a, -1).shape == (2, 3, 1)
    assert plexus.ones((1, 3, 1)).squeeze().shape == (3,) and plexus.squeeze(plexus.ones((1, 3, 1)), 2).shape == (1, 3)
    with pytest.raises(plexus.ShapeError, match="axis 0 has length 2, not 1"):
        a.squeeze(0)
    for name in ("sum", "mean", "max", "min", "argmax", "argmin"):
        assert (getattr(plexus, name)(a, axis=1).asnumpy() == getattr(np, name)(x, axis=1)).all(), name
    assert plexus.argmin(a, axis=0, keepdims=True).shape == (1, 3)
    assert not {"sum", "max", "min"} & set(plexus.__all__)  # `from plexus import *` keeps Python's own
    assert a.sum().asscalar() == 15.0 and abs(a.norm().item() - np.linalg.norm(x)) < 1e-5
    c = a.copy()
    c[:] = 0
    assert not c.is_(a) and (a.asnumpy() == x).all()
    assert (a.zeros_like().asnumpy() == 0).all() and (a.ones_like().asnumpy() == 1).all()
    # A product of shapes that do not fit names both, as NumPy's matmul does.
    with pytest.raises(plexus.ShapeError, match=r"inner dimensions differ, \(2, 3\) x \(4, 5\) \(3 vs 4\)"):
        a @ plexus.ones((4, 5))
    with pytest.raises(plexus.ShapeError, match=r"inner dimensions differ, \(2, 3\) x \(2, 3\) \(3 vs 2\)"):
        plexus.dot(a, a)


def test_spellings_d2l_uses_for_stacking_clipping_squeezing_and_scalar_maxima():
    np = need("numpy")
    a = plexus.ones((2, 3))
    assert plexus.stack(a, a).shape == (2, 2, 3) and plexus.stack([a, a], axis=1).shape == (2, 2, 3)
    assert plexus.concat(tensors=[a, a]).shape == (4, 3)
    # NumPy's positional axis (d2l's np.stack((K, K + 1, K + 2), 0)): it had been taken for a tensor.
    assert plexus.stack((a, a + 1, a + 2), 0).shape == (3, 2, 3) and plexus.stack([a, a], 2).shape == (2, 3, 2)
    assert plexus.concat([a, a], 1).shape == (2, 6) and plexus.concat([a, a], np.int64(0)).shape == (4, 3)
    with pytest.raises(TypeError, match="stack: the axis is given twice"):
        plexus.stack([a, a], 0, axis=1)
    # d2l's first cell (npx.set_np()) and its dtype spellings (np.arange(16, dtype=np.float32)).
    assert plexus.set_np() is None
    assert plexus.arange(4, dtype=plexus.float32).dtype == plexus.float32 == "float32"
    assert plexus.ones(2, dtype=plexus.bfloat16).dtype == plexus.bfloat16
    assert plexus.zeros(2, dtype=plexus.int64).dtype == "int64" and plexus.uint8 == "uint8"
    assert plexus.clip(plexus.array([-1.0, 0.5, 3.0]), None, 1).tolist() == [-1.0, 0.5, 1.0]
    assert plexus.clip(plexus.array([-1, 2], dtype="int32"), 0, None).tolist() == [0, 2]
    with pytest.raises(ValueError, match="give a_min, a_max or both"):
        plexus.clip(a, None, None)
    assert plexus.ones((1, 3, 1)).squeeze((0, 2)).shape == (3,) and plexus.ones((1, 3, 1)).squeeze((-1,)).shape == (1, 3)
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    assert (plexus.maximum(plexus.array(x), 0).asnumpy() == np.maximum(x, 0)).all()  # d2l's relu from scratch
    assert (plexus.minimum(0, plexus.array(x)).asnumpy() == np.minimum(0, x)).all()
    assert plexus.maximum(plexus.array([1, 2], dtype="int32"), 1.5).tolist() == [1.5, 2.0]  # as np.maximum


def test_last_batch_none_is_keep_and_rollover_length_is_the_next_epoch():
    np = need("numpy")
    ds = plexus.data.ArrayDataset(np.arange(10, dtype=np.float32).reshape(10, 1), np.arange(10))
    assert len(plexus.data.DataLoader(ds, 4, last_batch=None)) == 3
    with pytest.raises(TypeError, match="not a int"):
        plexus.data.DataLoader(ds, 4, last_batch=3)
    loader = plexus.data.DataLoader(ds, 4, last_batch="rollover")
    for want in (2, 3, 2, 3):  # Gluon's counts
        assert len(loader) == want and len(list(loader)) == want


def test_indexing_several_axes_as_numpy_reads_views_differentiably_and_writes_numbers():
    np = need("numpy")
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = plexus.array(a)
    for key in [(slice(None), slice(None, -1)), (0, 1), (1, slice(None), 2), (Ellipsis, 1),
                (slice(None), slice(0, 3, 2), -1), (0, Ellipsis), (1, 2, 3), (slice(None), slice(2, 2))]:
        assert t[key].shape == a[key].shape and (t[key].asnumpy() == a[key]).all(), key
    x = plexus.array(a)
    x.attach_grad()
    with plexus.autograd.record():
        y = (x[:, 1:, ::2] * 2).sum()  # d2l's Y[:, :-1] and the like
    y.backward()
    want = np.zeros_like(a)
    want[:, 1:, ::2] = 2
    assert (x.grad.asnumpy() == want).all()
    w, b = plexus.array(a), a.copy()
    for key, v in [((0, 0), 42), ((slice(None), slice(1, 3), slice(None, None, 3)), -1), ((Ellipsis, 0), 7.5)]:
        w[key] = v  # d2l's net[0].weight.data()[0, 0] = 42
        b[key] = v
        assert (w.asnumpy() == b).all(), key
    for key, message in [((0, 0, 0, 0), "too many indices for a tensor of rank 3: 4 were given"),
                         ((Ellipsis, Ellipsis), "a single ellipsis"), ((0, "a"), "ints, slices, '...', None and arrays of indices, not by a str"),
                         ((5, 0), "index 5 is out of bounds for axis 0 with size 2")]:
        with pytest.raises(IndexError, match=message):
            t[key]
    # Values of the places' shape, or broadcasting to it (d2l's P[:, :, 0::2] = np.sin(X); had been refused).
    for key, v in [((0, 0), np.arange(4.0)), ((slice(None), slice(None), slice(0, None, 2)), np.full((3, 1), 9.0)),
                   ((slice(None), 1), plexus.array([[1.0, 2.0, 3.0, 4.0]]))]:
        w[key] = v
        b[key] = v.asnumpy() if isinstance(v, plexus.Tensor) else v
        assert (w.asnumpy() == b).all(), key
    with pytest.raises(ValueError, match="could not broadcast the values of shape"):
        w[0, 0] = plexus.ones((5,))


def test_writing_elements_in_place_numpy_scalars_and_strided_rows_as_numpy():
    np = need("numpy")
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = plexus.array(b)
    x[0, 0] += 1  # the element read, added to, written back
    b[0, 0] += 1
    x[1, 2], b[1, 2] = np.float32(3), 3
    x[2, 3], b[2, 3] = np.int64(-5), -5
    x[::2] = 7
    b[::2] = 7
    assert (x.asnumpy() == b).all()
    x[:, 1] += 2  # a column read, added to and written back, as NumPy's (had been refused)
    b[:, 1] += 2
    assert (x.asnumpy() == b).all()
    with pytest.raises(IndexError, match="index 1180591620717411303424 is out of bounds for axis 1 with size 4"):
        x[0, 2 ** 70]
    assert plexus.stack(x, x, dim=1).shape == (3, 2, 4)


def test_save_into_a_missing_folder_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="save: no such folder"):
        plexus.save(tmp_path / "missing" / "f", [plexus.ones(2)])


def test_tensors_of_two_dtypes_meet_in_the_promoted_one_as_pytorch_and_mxnet_np():
    np = need("numpy")
    f = plexus.array([0.5, -2.0, 3.0])
    i = plexus.array([1, 2, -3], dtype="int32")
    for got, dtype, want in [(f + i, "float32", [1.5, 0, 0]), (i * f, "float32", [0.5, -4, -9]),
                             (i + plexus.array([1, 1, 1], dtype="int64"), "int64", [2, 3, -2]),
                             (f.astype("float16") * f.astype("bfloat16"), "float32", [0.25, 4, 9]),
                             (f.astype("float64") - i, "float64", [-0.5, -4, 6]),
                             (f * (f > 0), "float32", [0.5, 0, 3]),  # a comparison's uint8 as a mask
                             (i < f, "uint8", [0, 0, 1]),  # compared in float32: 1 < 0.5 is false
                             (plexus.where(f > 0, f, i), "float32", [0.5, 2, 3]),
                             (plexus.maximum(i, f), "float32", [1, 2, 3])]:
        assert got.dtype == dtype and got.asnumpy().tolist() == want
    # gradients come back in each operand's own dtype
    h, g = plexus.array([1.0, 2.0], dtype="float16"), plexus.array([3.0, 4.0])
    h.attach_grad()
    g.attach_grad()
    with plexus.autograd.record():
        y = (h * g).sum()
    y.backward()
    assert h.grad.dtype == "float16" and h.grad.asnumpy().tolist() == [3, 4]
    assert g.grad.dtype == "float32" and g.grad.asnumpy().tolist() == [1, 2]
    # NumPy agrees on the values where its dtype is the same
    a, b = np.array([1, 200, 7], np.uint8), np.array([-5, 100, 3], np.int32)
    assert (plexus.array(a) + plexus.array(b)).asnumpy().tolist() == (a + b).tolist()


def test_in_place_ops_take_arrays_and_lists_and_refuse_to_drop_a_fraction():
    np = need("numpy")
    # d2l's custom initializer: data[:] = uniform(-10, 10); data *= abs(data) >= 5, with a NumPy mask
    data = plexus.array([[-8.0, 3.0], [6.0, -4.5]])
    alias = data
    data *= np.abs(data.asnumpy()) >= 5  # a bool array: the tensor itself changes, not a new NumPy array
    assert data is alias and isinstance(data, plexus.Tensor)
    assert alias.tolist() == [[-8.0, 0.0], [6.0, 0.0]]
    data *= plexus.abs(data) >= 7  # the same with a Plexus comparison (uint8)
    assert alias.tolist() == [[-8.0, 0.0], [0.0, 0.0]]
    data += [1, 2]  # a list, broadcast
    data -= np.float64(1)
    data /= plexus.array([2.0, 4.0], dtype="float64")  # computed in float64, written in float32
    assert alias.dtype == "float32" and alias.tolist() == [[-4.0, 0.25], [0.0, 0.25]]
    h = plexus.ones(2, dtype="float16")
    h += np.array([0.5, 1.5])
    assert h.dtype == "float16" and h.tolist() == [1.5, 2.5]
    i = plexus.array([1, 2], dtype="int32")
    i += 1
    i *= plexus.array([3, 3], dtype="int64")  # an integer result is written in i's dtype
    assert i.dtype == "int32" and i.tolist() == [6, 9]
    for op in (lambda: i.__imul__(0.5), lambda: i.__iadd__(plexus.ones(2)), lambda: i.__isub__(np.array([0.5, 1]))):
        with pytest.raises(plexus.DTypeError, match="in place it would lose fractions or values int32 cannot hold"):
            op()
    assert i.tolist() == [6, 9]
    k = plexus.array([7, 9], dtype="int32")
    j = k
    j //= 2  # //= and **= too write in place (they had bound j to a new tensor)
    j //= plexus.array([2, 3], dtype="int32")
    assert k.tolist() == [1, 1]
    f = plexus.array([2.0, 3.0])
    g = f
    g **= [2, 1]
    g **= 2
    assert f.tolist() == [16.0, 9.0]
    with pytest.raises(plexus.DTypeError, match="not real numbers: text"):
        i += "a"
    # Integers and bools, a list of them too, go into an integer tensor in its dtype (NumPy's in-place casting).
    i += [1, 1]
    i -= np.array([True, False])
    i *= np.array([1, 2], dtype=np.int8)
    assert i.dtype == "int32" and i.tolist() == [6, 20]
    u = plexus.array([250, 1], dtype="uint8")
    u += [10, 1]  # wraps as NumPy's uint8 does
    assert u.dtype == "uint8" and u.tolist() == [4, 2]
    # Values that are not real numbers (NumPy would make None a NaN, drop an imaginary part, parse text
    # and count days); Python numbers NumPy holds as objects convert as NumPy converts them.
    for bad, what in ((None, "None"), ([None, 1.0], "None"), ([1 + 2j, 0], "complex numbers"),
                      (["1.5", "2"], "text"), ([b"3.5"], "text"),
                      (np.array(["2020-01-01"], "datetime64[D]"), "dates or times")):
        with pytest.raises(plexus.DTypeError, match="array: the values are not real numbers: " + what):
            data += bad
        with pytest.raises(TypeError, match="not real numbers: " + what):
            plexus.array(bad)
    assert alias.tolist() == [[-4.0, 0.25], [0.0, 0.25]]
    from decimal import Decimal
    from fractions import Fraction
    assert plexus.array([2 ** 70, Fraction(1, 2), Decimal("0.25")], dtype="float64").tolist() == [2.0 ** 70, 0.5, 0.25]
    assert plexus.array(np.array([1.5, 2.5], dtype=object)).tolist() == [1.5, 2.5]  # as a pandas object column
    with pytest.raises(plexus.DTypeError, match="y is 1180591620717411303424, which int32 cannot hold"):
        i += 2 ** 70


def test_threads_converting_to_numpy_for_the_first_time_at_once_do_not_deadlock():
    # pybind11 looked NumPy's C API up in a guarded static at the first asnumpy(), importing NumPy with the
    # guard held: one thread waited on the guard holding the GIL, the other for the GIL inside it (5 of 5).
    import subprocess
    import sys
    need("numpy")
    script = """
import threading, plexus
x = plexus.ones((1000,))
go = threading.Barrier(4)
def first():
    go.wait()
    x.asnumpy()
threads = [threading.Thread(target=first) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr[-2000:]


def test_arithmetic_with_numpy_arrays_and_lists_on_either_side_gives_tensors():
    np = need("numpy")
    x, h = plexus.array([1.0, 2.0, 3.0]), plexus.ones(3, dtype="float16")
    i = plexus.array([1, 2, 3], dtype="int32")
    a = np.array([2.0, 4.0, 8.0])
    # NumPy's operator calls the tensor's (Tensor.__array_ufunc__): both orders are tensors, promoted as tensor pairs.
    for got, want in ((x * a, [2.0, 8.0, 24.0]), (a * x, [2.0, 8.0, 24.0]), (a - x, [1.0, 2.0, 5.0]),
                      (x / a, [0.5, 0.5, 0.375]), (a / x, [2.0, 2.0, 8.0 / 3]), (a ** x, [2.0, 16.0, 512.0])):
        assert isinstance(got, plexus.Tensor) and got.dtype == "float64" and np.allclose(got.asnumpy(), want)
    assert (x + [1, 2, 3]).tolist() == [2.0, 4.0, 6.0] and ([1, 2, 3] - x).tolist() == [0.0, 0.0, 0.0]
    w = plexus.array([1.0, 2.0])
    w.attach_grad()
    with plexus.autograd.record():
        y = (np.array([3.0, 4.0], np.float32) * w).sum()  # a tensor op: autograd sees it
    y.backward()
    assert w.grad.tolist() == [3.0, 4.0]
    assert (x * np.array([[1.0], [2.0]], np.float32)).shape == (2, 3)  # broadcast to the larger shape
    # Integers stay in the tensor's integer dtype; `/` divides in float64, `//` floors as NumPy's.
    assert (i + [1, 1, 1]).dtype == "int32" and ([7, 7, 7] // i).tolist() == [7, 3, 2]
    assert (i / [2, 2, 2]).tolist() == [0.5, 1.0, 1.5] and (i + True).tolist() == [2, 3, 4]
    # NumPy scalars follow the scalar rules, as Python numbers do: float16 stays float16.
    assert (h - np.float32(2)).dtype == "float16" and (np.float64(2) * h).dtype == "float16"
    with pytest.raises(plexus.DTypeError, match="not real numbers: text"):
        x + ["a", "b", "c"]
    # Comparisons and @ take them too; @ in the tensor's dtype.
    assert (x > np.array([0.0, 5.0, 1.0])).tolist() == [1, 0, 1] and (np.array([0.0, 5.0, 1.0]) < x).tolist() == [1, 0, 1]
    assert (x == [1, 0, 3]).tolist() == [1, 0, 1] and (np.array([1.0, 0.0, 3.0]) != x).tolist() == [0, 1, 0]
    assert (x @ np.ones(3)).item() == 6.0 and (np.ones((2, 3)) @ x).tolist() == [6.0, 6.0]
    # Anything else is Python's NotImplemented: y's own operator is asked, else a TypeError.
    class Other:
        def __radd__(self, left):
            return "Other.__radd__"

    assert x + Other() == "Other.__radd__"
    assert (x == None) is False and (x != None) is True  # noqa: E711
    for op in (lambda: x + None, lambda: x < None, lambda: x @ 2.0):
        with pytest.raises(TypeError, match="not supported|unsupported operand"):
            op()



def test_integer_operands_are_compared_and_combined_as_they_are_never_wrapped():
    np = need("numpy")
    u, i = plexus.array(np.array([0, 1, 200], np.uint8)), plexus.array(np.array([1, -2, 3], np.int32))
    nu, ni = u.asnumpy(), i.asnumpy()
    # Values the tensor's dtype cannot hold are compared and combined as they are, as NumPy's.
    for got, want in ((u < [-1], nu < [-1]), (np.array([-1]) < u, np.array([-1]) < nu), (u == [256], nu == [256]),
                      (u >= np.array([-1], np.int8), nu >= np.array([-1], np.int8)),
                      (i == [2 ** 32 + 1], ni == [2 ** 32 + 1]), (i < np.array([2 ** 40]), ni < np.array([2 ** 40]))):
        assert got.tolist() == want.astype(np.uint8).tolist()
    for got, want in ((i + np.array([2 ** 40]), ni + np.array([2 ** 40])), (np.array([1000]) - u, np.array([1000]) - nu),
                      (u + [-1], nu.astype(np.int64) - 1)):
        assert got.dtype == "int64" and got.tolist() == want.tolist()
    # A list's values it holds keep its dtype, as the scalar rule (int32 + 1 stays int32); a typed NumPy
    # array promotes as NumPy's (uint8 + int64 is int64: 200 + 100 had wrapped to 44).
    assert (u + [1, 2, 3]).dtype == "uint8" and (i * np.array([2], np.int64)).dtype == "int64"
    for got, want in ((plexus.array(np.array([200], np.uint8)) + np.array([100], np.int64), [300]),
                      (plexus.array(np.array([2 ** 31 - 1], np.int32)) + np.array([1]), [2 ** 31]),
                      (u * np.array([1, 2, 3], np.uint64), [0, 2, 600]),
                      (i + np.array([1, 1, 1], np.int16), [2, -1, 4])):
        assert got.tolist() == want, (got, want)
    assert (i + np.array([1, 1, 1], np.int16)).dtype == "int32" and (u + np.array([True])).dtype == "uint8"
    with pytest.raises(plexus.DTypeError, match="integers beyond int64"):
        i + np.array([2 ** 64 - 1], np.uint64)
    # In place, x's dtype would wrap them: refused, and x is as it was.
    for op in ("+=", "-=", "*="):
        with pytest.raises(plexus.DTypeError, match=re.escape("x %s y: y holds values uint8 cannot hold (from -1 to 3)" % op)):
            exec("u %s [-1, 3]" % op)
    u += np.array([1, 2, 3], np.int64)
    assert u.tolist() == [1, 3, 203] and u.dtype == "uint8"
    # A number likewise (uint8 += 300 had wrapped to += 44, int32 += 2**40 to += 0, where a list was refused).
    i32 = plexus.array([3], dtype="int32")
    for target, stmt, message in ((u, "u += 300", "x += y: y is 300, which uint8 cannot hold (0 to 255)"),
                                  (u, "u += -1", "x += y: y is -1, which uint8 cannot hold (0 to 255)"),
                                  (u, "u += np.int64(300)", "x += y: y is 300, which uint8 cannot hold"),
                                  (i32, "i32 += 2 ** 40", "x += y: y is 1099511627776, which int32 cannot hold"),
                                  (i32, "i32 *= 2 ** 31", "x *= y: y is 2147483648, which int32 cannot hold")):
        before = target.tolist()
        with pytest.raises(plexus.DTypeError, match=re.escape(message)):
            exec(stmt)
        assert target.tolist() == before
    u -= 1
    i32 *= np.int32(2)
    assert u.tolist() == [0, 2, 202] and i32.tolist() == [6]


def test_numpy_arrays_take_a_tensor_in_place_and_numpys_other_ufuncs_compute_on_its_values():
    np = need("numpy")
    acc = np.zeros(3)
    total = acc
    for _ in range(3):
        total += plexus.ones(3)  # the NumPy array, in place (it had become a tensor, leaving acc at zero)
    assert total is acc and acc.tolist() == [3.0, 3.0, 3.0]
    acc -= plexus.arange(3)
    acc *= plexus.full((3,), 2.0)
    assert acc.tolist() == [6.0, 4.0, 2.0]
    x = plexus.array([1.0, 4.0])
    e = np.exp(x)
    assert isinstance(e, np.ndarray) and np.allclose(e, np.exp([1.0, 4.0]))
    assert np.sqrt(x).tolist() == [1.0, 2.0] and np.add.reduce(x) == 5.0
    with pytest.raises(TypeError):
        np.add(np.ones(2), np.ones(2), out=(x,))  # NumPy would write into a copy of x's values
    assert x.tolist() == [1.0, 4.0]


def test_integers_written_into_an_integer_tensor_must_fit_its_dtype_as_numpy_2s():
    u = plexus.zeros((2, 2), dtype="uint8")
    for write in (lambda: u.__setitem__(slice(None), 300), lambda: u.__setitem__(0, -1),
                  lambda: u.__setitem__(slice(None), [[-1, 300], [0, 0]]), lambda: u.__setitem__((0, 0), 256)):
        with pytest.raises(plexus.DTypeError, match="v holds values uint8 cannot hold"):
            write()  # a number had saturated (300 gave 255), a list wrapped (300 gave 44)
    assert u.tolist() == [[0, 0], [0, 0]]
    u[:] = 255
    u[0, 1] = 7
    assert u.tolist() == [[255, 7], [255, 255]]
    i = plexus.zeros(2, dtype="int32")
    with pytest.raises(plexus.DTypeError, match="int32 cannot hold"):
        i[:] = 2 ** 31
    np = need("numpy")
    for big in (2 ** 64, -2 ** 64, np.array([1, 300], dtype=object)):  # ints NumPy has no integer type for
        with pytest.raises(plexus.DTypeError, match="uint8 cannot hold"):
            u[0] = big
    assert u.tolist() == [[255, 7], [255, 255]]


def test_integers_beyond_2_53_reach_integer_tensors_exactly():
    # A double holds 2**60 + 1 as 2**60: the scalar paths had rounded it silently.
    np = need("numpy")
    big = 2 ** 60 + 1
    x = plexus.array([1, 2, 3], dtype="int64")
    assert (x + big).tolist() == [big + 1, big + 2, big + 3]
    assert (x - np.int64(big)).tolist() == [1 - big, 2 - big, 3 - big]
    assert (plexus.full(3, big - 2, dtype="int64") == big - 2).tolist() == [1, 1, 1]
    assert plexus.full(2, big, dtype="int64").tolist() == [big, big]
    x[0] = big
    x[1:2] = big + 2
    assert x.tolist() == [big, big + 2, 3]
    m = plexus.zeros((2, 2), dtype="int64")
    m[0, 1] = -big
    assert m.tolist() == [[0, -big], [0, 0]]
    x += big
    assert x.tolist() == [2 * big, 2 * big + 2, big + 3]
    i = plexus.array([1, 2], dtype="int32")
    assert (i + big).dtype == np.int64 and (i + big).tolist() == [big + 1, big + 2]  # as a list's integers
    with pytest.raises(plexus.DTypeError, match="int32 cannot hold"):
        i += big
    assert i.tolist() == [1, 2]
    assert (plexus.array([1.0]) + big).tolist() == [float(big) + 1.0]  # a float tensor computes in floats, as NumPy's


def test_full_of_an_integer_dtype_takes_only_the_values_it_holds():
    for value, dtype in ((300, "uint8"), (-1, "uint8"), (2 ** 31, "int32"), (3e9, "int32"), (2 ** 63, "int64")):
        with pytest.raises(plexus.DTypeError, match="full: .* is beyond what %s holds" % dtype):
            plexus.full(2, value, dtype=dtype)  # it had saturated: full(300, uint8) was 255
    for value in (float("inf"), float("nan")):  # a DTypeError (a TypeError) as for 3e9; it had been an InvalidArgumentError
        with pytest.raises(plexus.DTypeError, match="full: %s cannot be stored in int32" % value):
            plexus.full(2, value, dtype="int32")
    x = plexus.full(2, 1, dtype="int32")
    with pytest.raises(TypeError, match=r"x\[...\] = v: v holds NaN or an infinity, which int32 cannot hold"):
        x[0] = float("nan")
    assert x.tolist() == [1, 1]
    assert plexus.full(2, 255, dtype="uint8").tolist() == [255, 255]
    assert plexus.full(2, -2.7, dtype="int32").tolist() == [-2, -2]  # a float's integer part, as NumPy's
    assert plexus.full(2, True, dtype="uint8").tolist() == [1, 1]
    assert plexus.full(2, 300.5).tolist() == [300.5, 300.5]


def test_a_device_given_as_a_string_names_it_as_pytorchs_do():
    for text, want in (("cpu", plexus.cpu(0)), ("cpu:1", plexus.cpu(1)), (" cpu(1) ", plexus.cpu(1))):
        assert plexus.zeros(2, device=text).device == want
        assert plexus.array([1.0], ctx=text).device == want
    with pytest.raises(ValueError, match="device='cpu:' does not name a device"):
        plexus.zeros(2, device="cpu:")
    for text in ("tpu:0", "cpu(1", "cpu:1)"):
        with pytest.raises(ValueError, match="does not name a device"):
            plexus.ones(2, device=text)
    with pytest.raises(TypeError, match="device= takes a device .*not a int"):
        plexus.ones(2, device=0)
    with pytest.raises(ValueError, match="disagree"):
        plexus.ones(2, device="cpu:0", ctx=plexus.cpu(1))
    assert plexus.ones(2, device="cpu:1", ctx=plexus.cpu(1)).device == plexus.cpu(1)


def test_a_numpy_float16_array_keeps_its_bits():
    np = need("numpy")
    bits = np.array([0x7C01, 0xFE01, 0x0001, 0x8000, 0x7BFF], np.uint16)  # NaN payloads, a subnormal, -0, the max
    t = plexus.array(bits.view(np.float16))  # NaN payloads had become the quiet NaN through float64
    assert t.dtype == np.float16 and t.asnumpy().view(np.uint16).tolist() == bits.tolist()
    strided = plexus.array(bits.view(np.float16)[::2])
    assert strided.asnumpy().view(np.uint16).tolist() == bits[::2].tolist()


def test_arange_of_integers_is_exact_and_refuses_values_the_dtype_cannot_hold():
    np = need("numpy")
    big = 2 ** 60
    # Through doubles 2**60 + 3 is 2**60: the range had been empty.
    assert plexus.arange(big, big + 3, dtype="int64").tolist() == [big, big + 1, big + 2]
    assert plexus.arange(big + 5, big, -2, dtype="int64").tolist() == [big + 5, big + 3, big + 1]
    assert plexus.arange(-2 ** 62, -2 ** 62 + 4, 2, dtype="int64").tolist() == [-2 ** 62, -2 ** 62 + 2]
    assert plexus.arange(big, big, dtype="int64").tolist() == []
    for args, dtype in (((2 ** 40, 2 ** 40 + 3), "int32"), ((250, 260), "uint8"), ((-1, 3), "uint8")):
        with pytest.raises(plexus.DTypeError, match="arange: values from .* are beyond what %s holds" % dtype):
            plexus.arange(*args, dtype=dtype)  # int32 had saturated to 2147483647 three times
    assert plexus.arange(3, -1, -1, dtype="uint8").tolist() == [3, 2, 1, 0]
    assert plexus.arange(np.int64(4), dtype=np.int32).tolist() == np.arange(4, dtype=np.int32).tolist()
    assert plexus.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert plexus.arange(2.5, dtype="int32").tolist() == [0, 1, 2]


def test_review_of_the_integer_and_float16_paths():
    np = need("numpy")
    x = plexus.array([1, 2], dtype="int64")
    # Beyond int64 no tensor holds the number: it compares as a double, as NumPy 1's (it had raised).
    assert (x < 2 ** 63).tolist() == [1, 1] and (x == 2 ** 64 - 1).tolist() == [0, 0]
    assert (plexus.array([1], dtype="uint8") < np.uint64(2 ** 64 - 1)).tolist() == [1]
    # A big-endian float16 array converts (its bits had been read in this machine's order).
    be = np.array([1.5, -2.0, 65504.0], np.float16).astype(">f2")
    assert plexus.array(be).tolist() == [1.5, -2.0, 65504.0]
    # arange in a narrow dtype keeps it when a bound is beyond 2**53 (it had given int64).
    got = plexus.arange(5, 2 ** 60, 2 ** 60, dtype="uint8")
    assert got.dtype == np.uint8 and got.tolist() == [5]
    # full: an int beyond any dtype is a DTypeError (it had been "Unable to cast"); a 0-d array is exact.
    with pytest.raises(plexus.DTypeError, match="is beyond what int64 holds"):
        plexus.full(2, 2 ** 1030, dtype="int64")
    with pytest.raises(OverflowError):
        plexus.full(2, 2 ** 1030)
    assert plexus.full(2, np.array(2 ** 60 + 1), dtype="int64").tolist() == [2 ** 60 + 1] * 2
    with pytest.raises(plexus.DTypeError, match="full: 1152921504606846977 is beyond what int32 holds"):
        plexus.full(2, np.array(2 ** 60 + 1), dtype="int32")
    assert plexus.full(2, plexus.array([2 ** 60 + 1], dtype="int64")[0], dtype="int64").tolist() == [2 ** 60 + 1] * 2


def test_review_of_device_strings():
    import collections
    torch = need("torch")
    assert plexus.zeros(2, device=torch.device("cpu")).device == plexus.cpu(0)
    Pair = collections.namedtuple("Pair", "a b")
    parts = plexus.nn.split_and_load(plexus.arange(4).reshape(4, 1), Pair(plexus.cpu(0), plexus.cpu(1)))
    assert [p.device for p in parts] == [plexus.cpu(0), plexus.cpu(1)]  # a namedtuple had failed to rebuild
    with pytest.raises(ValueError, match="does not name a device"):
        plexus.zeros(2, device="cpu:\u0661")  # an Arabic-Indic one is no index


def test_sums_over_several_axes_round_once_as_over_all():
    # Axis by axis, each partial sum was rounded to the dtype: float16 [[6e4, 6e4], [-6e4, -6e4]] summed over
    # (0, 1) to inf - inf = NaN where sum() gives 0, and bfloat16 lost its last bit.
    x = plexus.array([[60000.0, 60000.0], [-60000.0, -60000.0]], dtype="float16")
    assert x.sum(axis=(0, 1)).item() == 0.0 == x.sum().item()
    assert x.sum(axis=(1, 0), keepdims=True).shape == (1, 1)
    np = need("numpy")
    rng = np.random.default_rng(7)
    for dtype in ("float16", "bfloat16", "float32"):
        a = rng.uniform(-4, 4, (3, 5, 7, 2))
        t = plexus.array(a).astype(dtype)
        exact = t.astype("float64").asnumpy()
        for axes in ((0, 2), (1, 3), (0, 1, 3), (3, 0)):
            for op in ("sum", "mean"):
                want = getattr(exact, op)(axis=axes)  # float64, then rounded once to the dtype
                got = getattr(t, op)(axis=axes)
                assert got.dtype == dtype and got.shape == want.shape
                once = plexus.array(want).astype(dtype).astype("float64").asnumpy()
                assert (got.astype("float64").asnumpy() == once).all(), (dtype, axes, op)
    # The gradient still spreads over the axes reduced.
    w = plexus.ones((2, 3, 4))
    w.attach_grad()
    with plexus.autograd.record():
        y = w.mean(axis=(0, 2))
    y.backward()
    assert np.allclose(w.grad.asnumpy(), 1 / 8)


def test_floats_into_an_integer_tensor_take_their_integer_part_only_where_it_fits():
    # x += 300.0 and x[:] = [300.0] had wrapped to 44, x[:] = 300.0 saturated to 255, and [nan] gave INT_MIN.
    x = plexus.array([1, 2, 3], dtype="uint8")
    for stmt, message in (("x += 300.0", "y is 300, which uint8 cannot hold"),
                          ("x *= 1e10", "which uint8 cannot hold"),
                          ("x[:] = 300.0", "v holds values uint8 cannot hold"),
                          ("x[:] = [300.0, 1.0, 1.0]", "v holds values uint8 cannot hold"),
                          ("x[:] = [float('nan'), 1.0, 1.0]", "v holds NaN or an infinity")):
        with pytest.raises(plexus.DTypeError, match=re.escape(message)):
            exec(stmt)
        assert x.tolist() == [1, 2, 3], stmt
    x[:] = 2.7  # the integer part, as a cast
    x += 1.0
    assert x.tolist() == [3, 3, 3]
