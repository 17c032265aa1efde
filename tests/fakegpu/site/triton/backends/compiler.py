"""triton.backends.compiler of the fake GPU: the languages a stages hook is told about."""

import enum


class Language(enum.Enum):
    TRITON = 0
    GLUON = 1
