"""File paths as Python's own file functions take them."""
import errno as _errno
import os as _os


def existing_file(path, call):
    """os.fspath(path) (a str, a pathlib.Path, ...) of a file that must be there: a FileNotFoundError, as
    open()'s, when it is not."""
    path = _os.fspath(path)
    if not _os.path.exists(path):
        raise FileNotFoundError(_errno.ENOENT, call + ": no such file", path)
    return path
