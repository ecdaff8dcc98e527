"""The Python entry points that read files or state under mutation fuzzing: ``profile_log``
(trajectory and chat logs), ``load_state_dict`` (saved states of every sampler kind) and
``select`` (arrays of odd shapes, dtypes and values; .npy and .safetensors files). Every input
either works or raises an ordinary Python exception whose message names the file where there is
one; a ``PanicException`` (a Rust panic crossing pyo3) or a dead interpreter is a failure.

Each campaign runs in a child interpreter (so that an abort is caught and named, not the end of
pytest) with a seeded, deterministic mutator. ``ENVDIST_FUZZ_INPUTS`` sets the number of
mutants per campaign (default 150); the long run is
``ENVDIST_FUZZ_INPUTS=100000 bash bindings/python/test.sh -k fuzz -s`` (docs/fuzzing.md).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time

import pytest
from test_samplers import CONFIGS, ENVS, KINDS  # the same samplers, configured to move quickly

DEFAULT_INPUTS = 150

NUMBERS = [b"0", b"-1", b"-0", b"4294967296", b"18446744073709551616", b"-9223372036854775809",
           b"1e999", b"-1e999", b"NaN", b"Infinity", b"1e-400", b"0.5", b"99999999999999999999999"]
VALUES = [b"null", b"true", b"[]", b"{}", b'""', b'"\\ud800"', b'"H9"', b'"answer_99"', b"[[[[0]]]]"]
BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\n", b'"', b"{", b"]", b"\xef\xbb\xbf"]
TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null')


class Mutator:
    """Seeded mutations of seed byte strings: flips, truncation, deletion, repetition,
    splices, invalid UTF-8, and token-aware ones (numbers made huge, negative or non-finite;
    values of another type; duplicated keys; deep nesting)."""

    def __init__(self, seed: int, seeds: list[bytes]):
        self.rng = random.Random(seed)
        self.seeds = seeds

    def mutant(self) -> tuple[bytes, str]:
        s = self.rng.randrange(len(self.seeds))
        b = bytearray(self.seeds[s])
        steps = []
        for _ in range(1 + self._zeros()):
            steps.append(self._mutate(b))
            del b[1 << 20:]
        return bytes(b), f"seed {s}: " + "; ".join(steps)

    def _zeros(self) -> int:
        n = 0
        while self.rng.random() < 0.5 and n < 4:
            n += 1
        return n

    def _mutate(self, b: bytearray) -> str:
        r, n = self.rng, len(b)
        toks = [m.span() for m in TOKEN.finditer(bytes(b))]
        op = r.randrange(11 if toks else 7)
        at = r.randrange(n + 1)
        if op == 0:
            if not n:
                b.extend(r.choice(BYTES))
                return "append a byte"
            i = r.randrange(n)
            b[i] ^= 1 << r.randrange(8)
            return f"flip a bit of byte {i}"
        if op == 1:
            del b[at:]
            return f"truncate to {at}"
        if op == 2:
            end = min(n, at + r.randrange(1, 32))
            del b[at:end]
            return f"delete {at}..{end}"
        if op == 3:
            end = min(n, at + r.randrange(1, 32))
            b[end:end] = b[at:end] * r.choice([1, 10, 500])
            return f"repeat {at}..{end}"
        if op == 4:
            ins = r.choice(BYTES)
            b[at:at] = ins
            return f"insert {ins!r} at {at}"
        if op == 5:
            other = r.choice(self.seeds)
            j = r.randrange(len(other) + 1)
            b[at:] = other[j:]
            return f"splice at {at} from {j}"
        if op == 6:
            depth = r.choice([129, 1000, 100000])
            b[at:at] = b"[" * depth
            return f"open {depth} brackets at {at}"
        x, y = r.choice(toks)
        if op in (7, 8):
            v = r.choice(NUMBERS)
        elif op == 9:
            v = r.choice(VALUES + [b'"' + b"a" * 70000 + b'"', b"[" * 200 + b"0" + b"]" * 200])
        else:
            # A duplicated key: `"key": value,` before the key.
            v = bytes(b[x:y]) + b":" + r.choice(VALUES) + b"," + bytes(b[x:y])
        b[x:y] = v
        return f"replace the token at {x} with {v[:30]!r}"


class Campaign:
    """Tries inputs and tallies outcomes; Python exceptions are refusals, anything else a
    failure."""

    def __init__(self, name: str, file_name: str | None = None):
        self.name, self.file_name = name, file_name
        self.inputs = self.ok = self.refused = 0
        self.errors: set[str] = set()
        self.failures: list[str] = []
        self.slowest = 0.0
        self.progress = os.environ.get("ENVDIST_FUZZ_PROGRESS")

    def run(self, label: str, fn, *args) -> None:
        if self.progress:
            with open(self.progress, "w") as f:
                f.write(label)
        t0 = time.perf_counter()
        try:
            fn(*args)
            self.ok += 1
        except (ValueError, TypeError, KeyError, OverflowError, FileNotFoundError, UnicodeError) as e:
            self.refused += 1
            text = str(e)
            self.errors.add(type(e).__name__ + ": " + re.sub(r'\d+', "#", re.sub(r'"[^"]*"', '"…"', text))[:120])
            if self.file_name and self.file_name not in text and not isinstance(e, (TypeError, UnicodeError)):
                self.failures.append(f"{label}: the error does not name {self.file_name}: {text[:300]}")
        except BaseException as e:  # noqa: BLE001 - a PanicException is a BaseException
            self.failures.append(f"{label}: {type(e).__name__}: {str(e)[:300]}")
        self.inputs += 1
        self.slowest = max(self.slowest, time.perf_counter() - t0)

    def report(self) -> dict:
        return {"campaign": self.name, "inputs": self.inputs, "ok": self.ok, "refused": self.refused,
                "distinct_errors": len(self.errors), "failures": self.failures[:20],
                "slowest_ms": round(self.slowest * 1e3, 1)}


def mutants(name: str, seeds: list[bytes]):
    m = Mutator(sum(name.encode()) * 7919, seeds)
    for s in seeds:
        yield s, "seed"
    for i in range(int(os.environ.get("ENVDIST_FUZZ_INPUTS", DEFAULT_INPUTS))):
        b, made = m.mutant()
        yield b, f"mutant #{i} ({made})"


# --- campaigns (run in the child) ------------------------------------------------------------


def campaign_profile_log(tmp: str) -> dict:
    import envdist

    lines = []
    for k, t in enumerate(envdist.HDC(ENVS, seed=0).sample(6)):
        env = t.make(canvas=16)
        env.reset(seed=t.seed)
        messages, done, steps = [], False, 0
        while not done and steps < 40 and env.oracle_action() is not None:
            action = env.oracle_action()
            messages += [{"role": "user", "content": [{"type": "text", "text": "Your move?"}]},
                         {"role": "assistant", "content": f"<answer>{envdist.ACTION_NAMES[action]}</answer>"}]
            _, _, term, trunc, _ = env.step(action)
            done, steps = term or trunc, steps + 1
        lines.append(json.dumps({"env_id": t.env_id, "episode": k, "seed": t.seed, "harness": t.harness,
                                 "scale": t.scale, "messages": messages}))
    chat = ("\n".join(lines) + "\n").encode()
    steps = b"\n".join(json.dumps({"schema_version": 1, "env": "maze/classic", "episode": 1, "t": i,
                                   "action": a, "seed": 5, "scale": 5}).encode()
                       for i, a in enumerate(["up", "left", "down", "right"]))
    path = os.path.join(tmp, "log.jsonl")
    c = Campaign("profile_log", "log.jsonl")
    for b, label in mutants("profile_log", [chat, steps]):
        with open(path, "wb") as f:
            f.write(b)
        c.run(label, envdist.profile_log, path)
    return c.report()


def campaign_load_state_dict(tmp: str) -> dict:
    from envdist import Curriculum

    c = Campaign("load_state_dict")
    for kind in KINDS:
        saved = Curriculum(kind, ENVS, CONFIGS[kind], seed=3)
        for _ in range(30):
            tickets = saved.sample(8)
            saved.update([t.ticket_id for t in tickets], [t.seed % 3 != 0 for t in tickets])
        seed = json.dumps(saved.state_dict()).encode()

        def restore(b: bytes, kind=kind):
            s = Curriculum(kind, ENVS, CONFIGS[kind], seed=0)
            text = b.decode("utf-8", "surrogateescape")
            try:
                state = json.loads(text)
            except (ValueError, RecursionError):
                state = text  # what Python's json cannot read goes to Rust as text
            s.load_state_dict(state)
            tickets = s.sample(4)
            s.trains_on(tickets)
            s.update([t.ticket_id for t in tickets], [True, False, True, False])
            s.state_dict(), s.snapshot(), s.probabilities()

        for b, label in mutants("load_state_dict/" + kind, [seed]):
            c.run(f"{kind} {label}", restore, b)
    return c.report()


def campaign_select(tmp: str) -> dict:
    import numpy as np

    import envdist

    rng = random.Random(11)
    c = Campaign("select")
    base = (np.arange(8 * 5).reshape(8, 5) * 7 % 4).astype(np.float32)
    grads = np.sin(np.arange(8 * 6, dtype=np.float32)).reshape(8, 6)
    shapes = [(0, 0), (0, 5), (10 ** 12, 0), (0, 10 ** 12), (1, 1), (8,), (2, 3, 4), (8, 5), (3, 70000)]
    dtypes = [np.bool_, np.int8, np.uint64, np.int64, np.float16, np.float64, np.complex64, object, "U3"]
    specials = [np.nan, np.inf, -np.inf, -1.0, 1e38, 3.5e38, 1e-45, 0.0]
    ks = [0, -1, 1, 3, 8, 9, 2 ** 63, 2 ** 64, True, 2.5, "3"]

    def array_case():
        kind = rng.randrange(4)
        if kind == 0:
            shape = rng.choice(shapes)
            a = np.zeros(shape, dtype=np.float32) if np.prod(shape, dtype=object) < 10 ** 7 else np.empty(shape)
        elif kind == 1:
            a = base.astype(rng.choice(dtypes))
        else:
            a = base.copy()
            for _ in range(rng.randrange(1, 4)):
                a[rng.randrange(8), rng.randrange(5)] = rng.choice(specials)
            if kind == 3:
                a = np.asfortranarray(a)[::-1, ::2] if rng.random() < 0.5 else a.T
        g = None
        if rng.random() < 0.5:
            g = grads.copy()
            if rng.random() < 0.5:
                g[rng.randrange(8), rng.randrange(6)] = rng.choice(specials)
            if rng.random() < 0.3:
                g = g[: rng.randrange(10)]
            if rng.random() < 0.1:
                g = np.zeros((8, 0), np.float32)
        opts = {}
        if rng.random() < 0.3:
            opts["env_ids"] = [f"e{i}" for i in range(rng.choice([0, 7, 8, 9]))]
        if rng.random() < 0.2:
            opts["abilities"] = ["a"] * rng.choice([0, 5, 6])
        return a, g, rng.choice(ks), opts

    n = int(os.environ.get("ENVDIST_FUZZ_INPUTS", DEFAULT_INPUTS))
    for i in range(n):
        a, g, k, opts = array_case()
        c.run(f"arrays #{i} (shape {getattr(a, 'shape', None)}, dtype {a.dtype}, k {k!r})",
              lambda: envdist.select(a, g, k, **opts))

    # File inputs: a .npy count matrix and a gradient .safetensors file, mutated.
    npy = os.path.join(tmp, "counts.npy")
    np.save(npy, base.astype(np.uint8))
    with open(npy, "rb") as f:
        npy_seed = f.read()
    c.file_name = "counts.npy"
    for b, label in mutants("select/npy", [npy_seed]):
        with open(npy, "wb") as f:
            f.write(b)
        c.run("npy " + label, envdist.select, npy, None, 3)

    # A gradient file as envdist writes it (safetensors: header length, JSON header, data).
    ids = [f"e{i}" for i in range(8)]
    header = json.dumps({"__metadata__": {"schema_version": "1", "env_ids": json.dumps(ids)},
                         "gradients": {"dtype": "F32", "shape": [8, 6], "data_offsets": [0, grads.nbytes]}})
    header += " " * (-len(header) % 8)
    st_seed = len(header).to_bytes(8, "little") + header.encode() + grads.astype("<f4").tobytes()
    st = os.path.join(tmp, "grads.safetensors")
    c.file_name = "grads.safetensors"
    for b, label in mutants("select/safetensors", [st_seed]):
        with open(st, "wb") as f:
            f.write(b)
        c.run("safetensors " + label, lambda: envdist.select(base, st, 3, env_ids=ids))
    return c.report()


CAMPAIGNS = {"profile_log": campaign_profile_log, "load_state_dict": campaign_load_state_dict,
             "select": campaign_select}


# --- the tests (run in pytest) ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(CAMPAIGNS))
def test_fuzz(name, tmp_path):
    progress = tmp_path / "progress"
    env = dict(os.environ, ENVDIST_FUZZ_PROGRESS=str(progress))
    # A child stuck in Rust (holding the GIL) cannot time itself out: the parent does, with
    # room for every input to take 50 ms.
    timeout = 600 + 0.05 * 10 * int(os.environ.get("ENVDIST_FUZZ_INPUTS", DEFAULT_INPUTS))
    try:
        proc = subprocess.run([sys.executable, __file__, name, str(tmp_path)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a hang: the campaign ran past {timeout:.0f} s, at {progress.read_text()}")
    last = progress.read_text() if progress.exists() else "before the first input"
    assert proc.returncode == 0, (
        f"the interpreter died (exit {proc.returncode}) at {last}\n{proc.stderr[-3000:]}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"fuzz python {name}: {report['inputs']} inputs ({report['ok']} ok, {report['refused']} refused), "
          f"{report['distinct_errors']} distinct errors, {len(report['failures'])} failures; "
          f"slowest input {report['slowest_ms']} ms")
    assert not report["failures"], "\n".join(report["failures"])


if __name__ == "__main__":
    print(json.dumps(CAMPAIGNS[sys.argv[1]](sys.argv[2])))
