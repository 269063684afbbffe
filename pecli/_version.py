"""pecli's version, and the line ``pecli --version`` prints."""

__version__ = "0.2.0"


def version_message() -> str:
    """pecli's version, Python's and those of the libraries it runs on (numba where installed)."""
    import sys
    from importlib.metadata import PackageNotFoundError, version

    deps = []
    for name in ("numpy", "h5py", "rich", "click"):
        try:
            deps.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            deps.append(f"{name} missing")
    try:  # large tables from the compiled kernels (pecli.kernels.compiled)
        deps.append(f"numba {version('numba')}")
    except PackageNotFoundError:
        pass
    return f"pecli {__version__} (Python {sys.version.split()[0]}; {', '.join(deps)})"
