"""numpy's side of the .npy/.npz interoperability tests (run by npy_test.cpp).

  npy_interop.py generate DIR   write files with numpy for Lathe to read
  npy_interop.py check DIR      check, with numpy, the files Lathe wrote into DIR

Both sides fill arrays with the same formula (value(i) below, also in npy_test.cpp), so
no data files are committed.
"""
import os
import sys
import zipfile

import numpy as np

# name used in file names -> numpy dtype; bf16 has no numpy type and is tested in C++.
DTYPES = {
    "f16": "<f2", "f32": "<f4", "f64": "<f8",
    "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
    "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8",
    "bool": "|b1",
}
SHAPE = (2, 3, 4)


def value(dtype, n):
    """Element i of the test arrays: small, exact in every type, signed where it can be."""
    i = np.arange(n, dtype=np.int64)
    k = (i * 37) % 101
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return ((k - 50) / 4.0).astype(dt)
    if dt.kind == "i":
        return (k - 50).astype(dt)
    if dt.kind == "u":
        return k.astype(dt)
    return (i % 3 == 0).astype(dt)


def pattern(dtype, shape=SHAPE):
    return value(dtype, int(np.prod(shape))).reshape(shape)


def save_version(path, array, version):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def generate(out):
    for name, dtype in DTYPES.items():
        np.save(os.path.join(out, name + ".npy"), pattern(dtype))
    np.save(os.path.join(out, "scalar.npy"), np.float64(3.5))
    np.save(os.path.join(out, "empty.npy"), np.zeros((0, 5), np.float32))
    np.save(os.path.join(out, "special.npy"),
            np.array([np.nan, np.inf, -np.inf, -0.0, 1.5], np.float32))
    np.save(os.path.join(out, "extremes.npy"),
            np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0], np.int64))
    save_version(os.path.join(out, "v2.npy"), pattern("<i4"), (2, 0))
    save_version(os.path.join(out, "v3.npy"), pattern("<f8"), (3, 0))
    # numpy rounds float32 -> float16 to nearest even, subnormals included: a reference for
    # Lathe's converter over the whole range.
    rng = np.random.default_rng(5)
    f32 = np.concatenate([
        rng.standard_normal(20000).astype(np.float32) * np.float32(1000),
        rng.uniform(-7e-5, 7e-5, 20000).astype(np.float32),     # f16 subnormals
        rng.uniform(-7e4, 7e4, 5000).astype(np.float32),        # overflow to inf
        np.array([65504, 65519.99, 65520, 2.0**-24, 2.0**-25, 2.0**-26], np.float32),
    ])
    with np.errstate(over="ignore"):
        np.savez(os.path.join(out, "f16_rounding.npz"), f32=f32, f16=f32.astype(np.float16))

    # Files Lathe must refuse.
    np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(pattern("<f4", (2, 3))))
    np.save(os.path.join(out, "unicode.npy"), np.array(["a", "bc"], dtype="<U10"))
    np.save(os.path.join(out, "object.npy"), np.array([1, "x"], dtype=object),
            allow_pickle=True)
    np.save(os.path.join(out, "bigendian.npy"), np.arange(4, dtype=">f4"))
    np.save(os.path.join(out, "complex.npy"), np.arange(3, dtype=np.complex64))
    np.save(os.path.join(out, "structured.npy"),
            np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))

    arrays = {
        "weights": pattern("<f4"),
        "ids": pattern("<i8"),
        "mask": pattern("|b1"),
        "scalar": np.float64(3.5),
        "empty": np.zeros((0, 5), np.float32),
        "half": pattern("<f2"),
    }
    np.savez(os.path.join(out, "stored.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "compressed.npz"), **arrays)
    np.savez(os.path.join(out, "positional.npz"), pattern("<u2"), pattern("<i1"))
    np.savez(os.path.join(out, "bad_member.npz"), good=pattern("<f4"),
             names=np.array(["x"], dtype="<U10"))
    np.savez(os.path.join(out, "empty.npz"))


def fail(message):
    print("numpy check failed: " + message)
    sys.exit(1)


def expect_array(label, got, expected):
    if got.dtype != expected.dtype:
        fail(f"{label}: dtype {got.dtype}, expected {expected.dtype}")
    if got.shape != expected.shape:
        fail(f"{label}: shape {got.shape}, expected {expected.shape}")
    if not np.array_equal(got, expected):
        fail(f"{label}: values differ:\n{got}\nexpected\n{expected}")


def check(out):
    for name, dtype in DTYPES.items():
        path = os.path.join(out, "lathe_" + name + ".npy")
        expect_array(path, np.load(path, allow_pickle=False), pattern(dtype))
        # Data starts on a 64-byte boundary, as numpy itself writes it (mmap-friendly).
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            np.lib.format._read_array_header(f, version)
            if f.tell() % 64 != 0:
                fail(f"{path}: data starts at {f.tell()}, not a multiple of 64")
        expect_array(path + " (mmap)", np.load(path, mmap_mode="r"), pattern(dtype))

    expect_array("lathe_scalar.npy", np.load(os.path.join(out, "lathe_scalar.npy")),
                 np.array(3.5))
    expect_array("lathe_empty.npy", np.load(os.path.join(out, "lathe_empty.npy")),
                 np.zeros((0, 5), np.float32))
    expect_array("lathe_bf16.npy", np.load(os.path.join(out, "lathe_bf16.npy")),
                 np.array([1.0, -2.5, 0.0078125], np.float32))

    path = os.path.join(out, "lathe.npz")
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                fail(f"{path}: member {info.filename} is compressed ({info.compress_type})")
        if z.testzip() is not None:
            fail(f"{path}: bad CRC in {z.testzip()}")
        names = [info.filename for info in z.infolist()]
    if names != ["weights.npy", "ids.npy", "mask.npy", "dir/nested.npy"]:
        fail(f"{path}: members {names}")
    with np.load(path, allow_pickle=False) as npz:
        expect_array("weights", npz["weights"], pattern("<f4"))
        expect_array("ids", npz["ids"], pattern("<i8"))
        expect_array("mask", npz["mask"], pattern("|b1"))
        expect_array("dir/nested", npz["dir/nested"], pattern("<u1", (7,)))
    with np.load(os.path.join(out, "lathe_empty.npz")) as npz:
        if len(npz.files) != 0:
            fail(f"lathe_empty.npz has {npz.files}")
    print("numpy read every file Lathe wrote")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("generate", "check"):
        sys.exit(__doc__)
    os.makedirs(sys.argv[2], exist_ok=True)
    (generate if sys.argv[1] == "generate" else check)(sys.argv[2])
