"""caliber's built-in corpus: Triton operator workloads, one function per op.

Each op function takes torch tensors on the GPU and an optional `out` (the
tensor(s) to write, so tests can poison them first) and returns its result.
The workloads, their dtypes and kinds are listed in ../inventory_main.csv."""

from .attention import attention_fwd
from .copy import permute_copy, transpose
from .indexing import embedding, gather, index_select, scatter_add
from .loss import cross_entropy
from .matmul import bmm, matmul, matmul_bias, matmul_bias_gelu
from .norms import layer_norm_bwd, layer_norm_fwd, rms_norm_bwd, rms_norm_fwd
from .pointwise import dropout, gelu_bwd, gelu_fwd
from .reductions import argmax_rows, max_rows, mean_cols, min_cols, sum_cols, sum_rows, var_rows
from .scan import cumsum
from .softmax import log_softmax_cols, log_softmax_rows, softmax_cols, softmax_rows
from .sort import topk

__all__ = [
    "argmax_rows", "attention_fwd", "bmm", "cross_entropy", "cumsum", "dropout", "embedding", "gather",
    "gelu_bwd", "gelu_fwd", "index_select", "layer_norm_bwd", "layer_norm_fwd", "log_softmax_cols",
    "log_softmax_rows", "matmul", "matmul_bias", "matmul_bias_gelu", "max_rows", "mean_cols", "min_cols",
    "permute_copy", "rms_norm_bwd", "rms_norm_fwd", "scatter_add", "softmax_cols", "softmax_rows", "sum_cols",
    "sum_rows", "topk", "transpose", "var_rows",
]
