"""torch.nn.functional for the fake GPU: results of the shapes torch gives."""

import torch


def gelu(x, approximate="none"):
    return x._like()


relu = silu = sigmoid = tanh = gelu


def softmax(x, dim=-1, dtype=None):
    return x._like(dtype=dtype)


log_softmax = softmax


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return torch._binary(torch._binary(x, weight) if weight is not None else x, bias) if bias is not None else x._like()


def rms_norm(x, normalized_shape, weight=None, eps=None):
    return torch._binary(x, weight) if weight is not None else x._like()


def cross_entropy(logits, target, reduction="mean", **kwargs):
    return logits._like(target.shape if reduction == "none" else (), torch.float32)


def dropout(x, p=0.5, training=True, inplace=False):
    return x._like()


def embedding(index, weight, **kwargs):
    return weight._like(tuple(index.shape) + tuple(weight.shape[1:]))
