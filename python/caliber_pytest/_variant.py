"""Variant naming: the folder name Triton gives a compiled kernel in its cache."""

import base64


def variant_name(hash_hex):
    """base32 of the metadata hash's bytes without '=' padding, as Triton's
    runtime/cache.py names the cache folder of that kernel."""
    return base64.b32encode(bytes.fromhex(hash_hex)).decode("ascii").rstrip("=")
