"""attention_core: the math and the data of Attention Lab, pure (torch, numpy, pandas only).

Shape letters used throughout: T tokens, d_model embedding size, d_k query/key size,
d_v value size, h heads. Every function takes and returns torch tensors (float32 by
default; float64 works too) unless its name says frame or labels.

Modules: embeddings (X), attention (one head, step by step), heads (multi-head), masks,
positions, projections (W_q, W_k, W_v, W_o), normalization and saturation (softmax taken
apart, scaling), geometry and similarity (facts the pages state), presets (the tutorials'
examples with their printed numbers), loops (the tutorials' loops), reference (PyTorch's
own), export (the whole block as files), tables (tensors -> DataFrames).
"""

from attention_core.attention import (
    MIN_TEMPERATURE,
    AttentionSteps,
    apply_mask,
    attention,
    attention_scores,
    column_softmax,
    context_vectors,
    contributions,
    dot_product_terms,
    naive_normalize,
    naive_softmax,
    project_qkv,
    row_entropy,
    scale_scores,
    self_attention,
    softmax,
    uniform_entropy,
)
from attention_core.embeddings import (
    MAX_TOKENS,
    check_d_model,
    check_seed,
    distinct_tokens,
    one_hot_embeddings,
    random_embeddings,
    tokenize,
    validate_embedding_matrix,
)
from attention_core.heads import (
    HeadParams,
    MultiHeadSteps,
    head_size,
    merge_heads,
    multi_head_attention,
    parameter_count,
    random_head_params,
    split_heads,
)
from attention_core.masks import (
    causal_mask,
    fully_masked_rows,
    mask_with_constant,
    multiply_and_renormalize,
    no_mask,
    padding_mask,
    sliding_window_mask,
    to_blocked,
)
from attention_core.presets import (
    DEFAULT_PRESET,
    PRESETS,
    PRESETS_BY_KEY,
    SCALING_EXAMPLE,
    Preset,
    WorkedExample,
)
from attention_core.projections import (
    Projections,
    random_output_projection,
    random_projections,
    recover_projection,
)
from attention_core.tables import long_frame, token_labels, vector_frame

__all__ = [
    "DEFAULT_PRESET",
    "MAX_TOKENS",
    "MIN_TEMPERATURE",
    "PRESETS",
    "PRESETS_BY_KEY",
    "SCALING_EXAMPLE",
    "AttentionSteps",
    "HeadParams",
    "MultiHeadSteps",
    "Preset",
    "Projections",
    "WorkedExample",
    "apply_mask",
    "attention",
    "attention_scores",
    "causal_mask",
    "check_d_model",
    "check_seed",
    "column_softmax",
    "context_vectors",
    "contributions",
    "distinct_tokens",
    "dot_product_terms",
    "fully_masked_rows",
    "head_size",
    "long_frame",
    "mask_with_constant",
    "merge_heads",
    "multi_head_attention",
    "multiply_and_renormalize",
    "naive_normalize",
    "naive_softmax",
    "no_mask",
    "one_hot_embeddings",
    "padding_mask",
    "parameter_count",
    "project_qkv",
    "random_embeddings",
    "random_head_params",
    "random_output_projection",
    "random_projections",
    "recover_projection",
    "row_entropy",
    "scale_scores",
    "self_attention",
    "sliding_window_mask",
    "softmax",
    "split_heads",
    "to_blocked",
    "token_labels",
    "tokenize",
    "uniform_entropy",
    "validate_embedding_matrix",
    "vector_frame",
]
