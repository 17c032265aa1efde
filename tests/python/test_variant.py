"""Variant names are Triton's cache folder names."""

import base64

from caliber_pytest._variant import variant_name


def test_round_trip_of_a_real_folder_name():
    name = "7PQSVU3S6XKXVJ5H3DEJGP2DUA3YJ5XWQRJK2VF4QNAQGSRYMUSA"
    hash_hex = base64.b32decode(name + "====").hex()
    assert len(hash_hex) == 64
    assert variant_name(hash_hex) == name


def test_no_padding_and_upper_case():
    name = variant_name("00" * 32)
    assert name == "A" * 52
    assert "=" not in variant_name("ff" * 32)
    assert variant_name("ff" * 32).isupper()
