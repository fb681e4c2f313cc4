"""The tutorial examples, exactly as the five notebooks in shared/seeds print them.

Each preset carries its tokens, its embedding matrix X (T, d_model), the seed file it
comes from, where the example itself comes from, one sentence on what it teaches, and
``printed``: the numbers its tutorial prints, by what they are ("scores" the full (T, T) matrix,
"query_scores" the row of the query the tutorial explains), so tests and pages can compare with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Preset:
    """One tutorial example: a sentence and its embeddings as printed."""

    key: str
    name: str
    tokens: tuple[str, ...]
    embeddings: tuple[tuple[float, ...], ...]
    source: str  # the seed file
    origin: str  # where the example itself comes from
    lesson: str  # what it teaches, one sentence
    query_index: int = 0  # the token the tutorial explains in detail
    notes: tuple[str, ...] = field(default=())
    printed: Mapping[str, tuple] = field(default_factory=dict, hash=False, compare=False)  # numbers as printed

    def matrix(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """The embeddings as a tensor X of shape (T, d_model)."""
        return torch.tensor(self.embeddings, dtype=dtype)

    @property
    def d_model(self) -> int:
        return len(self.embeddings[0])


@dataclass(frozen=True)
class WorkedExample:
    """003's example: Q, K and V given directly, with no sentence and no embeddings."""

    key: str
    name: str
    tokens: tuple[str, ...]
    Q: tuple[tuple[float, ...], ...]
    K: tuple[tuple[float, ...], ...]
    V: tuple[tuple[float, ...], ...]
    source: str
    origin: str
    lesson: str
    printed: Mapping[str, tuple] = field(default_factory=dict, hash=False, compare=False)  # numbers as printed

    def tensors(self, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Q, K, V as (T, d_k) tensors."""
        return tuple(torch.tensor(m, dtype=dtype) for m in (self.Q, self.K, self.V))  # type: ignore[return-value]


JOURNEY = Preset(
    key="journey",
    name="Your journey starts with one step",
    tokens=("Your", "journey", "starts", "with", "one", "step"),
    embeddings=(
        (0.43, 0.15, 0.89),
        (0.55, 0.87, 0.66),
        (0.57, 0.85, 0.64),
        (0.22, 0.58, 0.33),
        (0.77, 0.25, 0.10),
        (0.05, 0.80, 0.55),
    ),
    source="002_e66620563d46e9c6.txt",
    origin="The running example of Sebastian Raschka's book Build a Large Language Model (From Scratch), "
    "chapter 3, as used in the “Your journey starts with one step” tutorial notebook.",
    lesson="Simplified attention for the query 'starts', then trainable W_q, W_k, W_v turn the same "
    "inputs into queries, keys and values.",
    query_index=2,
    notes=(
        "The tutorial's sections 2.2.4-2.2.6 are wrong: X W_k^T is not a score, softmax is taken down "
        "columns (dim=0), and the 'context vector' it prints is just the inputs again.",
    ),
    printed={
        "query_scores": (0.9422, 1.4754, 1.457, 0.8296, 0.7154, 1.0605),
        "query_weights": (0.139, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565),
        "query_context": (0.4431, 0.6496, 0.5671),
        "scores": (
            (0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.631),
            (0.9544, 1.495, 1.4754, 0.8434, 0.707, 1.0865),
            (0.9422, 1.4754, 1.457, 0.8296, 0.7154, 1.0605),
            (0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565),
            (0.4576, 0.707, 0.7154, 0.3474, 0.6654, 0.2935),
            (0.631, 1.0865, 1.0605, 0.6565, 0.2935, 0.945),
        ),
        "weights": (
            (0.2098, 0.2006, 0.1981, 0.1242, 0.122, 0.1452),
            (0.1385, 0.2379, 0.2333, 0.124, 0.1082, 0.1581),
            (0.139, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565),
            (0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.172),
            (0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295),
            (0.1385, 0.2184, 0.2128, 0.142, 0.0988, 0.1896),
        ),
        "context": (
            (0.4421, 0.5931, 0.579),
            (0.4419, 0.6515, 0.5683),
            (0.4431, 0.6496, 0.5671),
            (0.4304, 0.6298, 0.551),
            (0.4671, 0.591, 0.5266),
            (0.4177, 0.6503, 0.5645),
        ),
        # Sections 2.2.4 and 2.2.5, wrong: X W_k^T printed as "scores", then softmax over dim=0.
        "wrong_scores": (
            (0.5232, 1.1521, 0.3574),
            (0.7191, 1.3298, 0.7116),
            (0.7241, 1.3226, 0.7098),
            (0.3542, 0.6728, 0.3956),
            (0.6108, 0.82, 0.4761),
            (0.3336, 0.7944, 0.4392),
        ),
        "wrong_column_weights": (
            (0.1612, 0.1846, 0.1409),
            (0.1961, 0.2205, 0.2008),
            (0.1971, 0.2189, 0.2004),
            (0.1362, 0.1143, 0.1464),
            (0.176, 0.1325, 0.1586),
            (0.1334, 0.1291, 0.1529),
        ),
        # Section 2.3: the projections of the same inputs by unseeded torch.rand(3, 3) matrices.
        "q_journey": (1.0983, 1.741, 1.5428),
        "k_journey": (1.4116, 0.7436, 0.9073),
        "v_journey": (1.2868, 1.5327, 0.7423),
        "projected_score_journey": (4.244719982147217,),
        "Q": (
            (0.6376, 1.1715, 1.1689),
            (1.0983, 1.741, 1.5428),
            (1.102, 1.7286, 1.5322),
            (0.5779, 0.9429, 0.8136),
            (0.8592, 1.0181, 0.9099),
            (0.5825, 1.1272, 0.9741),
        ),
        "K": (
            (0.8316, 0.5522, 0.3095),
            (1.4116, 0.7436, 0.9073),
            (1.3995, 0.7317, 0.8929),
            (0.7891, 0.4133, 0.5618),
            (0.7879, 0.3115, 0.3833),
            (0.9565, 0.5554, 0.7301),
        ),
        "V": (
            (0.8957, 1.0611, 0.4683),
            (1.2868, 1.5327, 0.7423),
            (1.2731, 1.503, 0.7403),
            (0.7049, 0.8791, 0.3975),
            (0.6687, 0.5438, 0.4965),
            (0.8842, 1.2215, 0.4439),
        ),
        "projected_scores": (
            (1.5389, 2.8317, 2.7933, 1.644, 1.3154, 2.114),
            (2.3522, 4.2447, 4.1886, 2.4529, 1.999, 3.144),
            (2.3451, 4.2311, 4.1753, 2.4447, 1.9941, 3.1329),
            (1.2531, 2.2551, 2.2252, 1.3028, 1.0609, 1.6705),
            (1.5584, 2.7955, 2.76, 1.61, 1.3429, 2.0517),
            (1.4083, 2.5443, 2.5099, 1.4728, 1.1835, 1.8945),
        ),
        "projected_weights": (
            (0.0845, 0.3078, 0.2962, 0.0938, 0.0676, 0.1502),
            (0.0558, 0.3702, 0.35, 0.0617, 0.0392, 0.1231),
            (0.0561, 0.3697, 0.3496, 0.0619, 0.0395, 0.1233),
            (0.1024, 0.279, 0.2708, 0.1077, 0.0845, 0.1555),
            (0.0887, 0.3058, 0.2951, 0.0934, 0.0715, 0.1453),
            (0.0942, 0.2934, 0.2835, 0.1005, 0.0752, 0.1532),
        ),
        "projected_context": (
            (1.0929, 1.3092, 0.6248),
            (1.1505, 1.3786, 0.6587),
            (1.15, 1.378, 0.6584),
            (1.0655, 1.274, 0.6094),
            (1.091, 1.305, 0.6242),
            (1.0794, 1.2921, 0.6171),
        ),
    },
)

LIGHT = Preset(
    key="light",
    name="I can't find the light switch",
    tokens=("I", "can't", "find", "the", "light", "switch"),
    embeddings=(
        (0.21, 0.47, 0.91),
        (0.52, 0.11, 0.65),
        (0.03, 0.85, 0.19),
        (0.73, 0.64, 0.39),
        (0.13, 0.55, 0.68),
        (0.22, 0.77, 0.08),
    ),
    source="001_5dc6ea26df512a1c.txt",
    origin="Arbitrary 3-d embeddings made up for illustration in the “I can't find the light switch” "
    "tutorial notebook.",
    lesson="The three steps (scores, softmax, context vector) for the query 'light', then for all "
    "tokens at once with a matrix product.",
    query_index=4,
    printed={
        "query_scores": (0.9046, 0.5701, 0.6006, 0.7121, 0.7818, 0.5065),
        "query_context": (0.3039, 0.56, 0.5155),
        "scores": (
            (1.0931, 0.7524, 0.5787, 0.809, 0.9046, 0.4809),
            (0.7524, 0.705, 0.2326, 0.7035, 0.5701, 0.2511),
            (0.5787, 0.2326, 0.7595, 0.64, 0.6006, 0.6763),
            (0.809, 0.7035, 0.64, 1.0946, 0.7121, 0.6846),
            (0.9046, 0.5701, 0.6006, 0.7121, 0.7818, 0.5065),
            (0.4809, 0.2511, 0.6763, 0.6846, 0.5065, 0.6477),
        ),
        "weights": (
            (0.2256, 0.1605, 0.1349, 0.1698, 0.1869, 0.1223),
            (0.2024, 0.1931, 0.1204, 0.1928, 0.1687, 0.1226),
            (0.1641, 0.1161, 0.1966, 0.1745, 0.1677, 0.1809),
            (0.1705, 0.1534, 0.144, 0.2268, 0.1547, 0.1505),
            (0.2068, 0.148, 0.1526, 0.1706, 0.1829, 0.1389),
            (0.1552, 0.1233, 0.1887, 0.1902, 0.1592, 0.1834),
        ),
        "context": (
            (0.3101, 0.544, 0.5383),
            (0.3362, 0.5293, 0.5323),
            (0.2897, 0.6003, 0.4588),
            (0.3387, 0.5656, 0.488),
            (0.3039, 0.56, 0.5155),
            (0.3023, 0.5974, 0.4544),
        ),
    },
)

TRANSFORMER = Preset(
    key="transformer",
    name="How self attention works in Transformer",
    tokens=("How", "self", "attention", "works", "in", "Transformer"),
    embeddings=(
        (-0.3178, -0.8048, 0.7659),
        (0.6087, 0.6313, 0.4881),
        (-0.5776, 0.5329, 1.2401),
        (-0.7568, 1.0494, -0.4434),
        (1.8883, -1.5365, -0.5007),
        (-1.2233, -0.2219, -1.2253),
    ),
    source="000_58c4ba59d63ddc63.txt",
    origin="Random embeddings (torch.randn(6, 3), unseeded) printed in the “How self attention works in "
    "Transformer” tutorial notebook; the lab keeps the printed values.",
    lesson="Why dividing scores by their sum fails (negative, exploding 'weights') and softmax works.",
    query_index=1,
    printed={
        "query_scores": (-0.3276, 1.0072, 0.5901, -0.0147, -0.0648, -1.4828),
        "query_naive_weights": (1.1195, -3.4418, -2.0162, 0.0502, 0.2215, 5.0668),
        "query_weights": (0.0972, 0.3694, 0.2434, 0.1329, 0.1264, 0.0306),
        "query_context": (0.154, 0.2231, 0.3968),
        "scores": (
            (1.3354, -0.3276, 0.7045, -0.9436, 0.253, -0.3711),
            (-0.3276, 1.0072, 0.5901, -0.0147, -0.0648, -1.4828),
            (0.7045, 0.5901, 2.1554, 0.4466, -2.5304, -0.9311),
            (-0.9436, -0.0147, 0.4466, 1.8706, -2.8194, 1.2363),
            (0.253, -0.0648, -2.5304, -2.8194, 6.177, -1.3556),
            (-0.3711, -1.4828, -0.9311, 1.2363, -1.3556, 3.0472),
        ),
        "weights": (
            (0.42655, 0.080862, 0.22698, 0.043673, 0.14451, 0.077419),
            (0.097219, 0.36939, 0.24339, 0.13294, 0.12644, 0.030624),
            (0.13955, 0.12446, 0.59548, 0.10782, 0.0054933, 0.02719),
            (0.030096, 0.076201, 0.12086, 0.50202, 0.0046118, 0.26622),
            (0.00266, 0.0019358, 0.00016447, 0.00012318, 0.99458, 0.00053247),
            (0.026468, 0.0087083, 0.01512, 0.13207, 0.0098898, 0.80774),
        ),
        "context": (
            (-0.0723, -0.3647, 0.4611),
            (0.154, 0.2231, 0.3968),
            (-0.417, 0.3823, 0.8222),
            (-0.7299, 0.5489, -0.341),
            (1.8775, -1.529, -0.4955),
            (-1.0813, -0.0636, -1.01),
        ),
    },
)

ONE_HOT = Preset(
    key="one-hot",
    name="Self Attention is good",
    tokens=("Self", "Attention", "is", "good"),
    embeddings=(
        (1.0, 0.0, 0.0, 0.0),
        (0.0, 1.0, 0.0, 0.0),
        (0.0, 0.0, 1.0, 0.0),
        (0.0, 0.0, 0.0, 1.0),
    ),
    source="004_9f552c0b9e145459.txt",
    origin="One-hot vectors for a four-word sentence, from the numpy “Self Attention is good” tutorial notebook.",
    lesson="With one-hot inputs no two words are similar, so every output resembles its own input.",
    query_index=0,
    printed={
        "query_weights": (0.47536689, 0.1748777, 0.1748777, 0.1748777),
    },
)

NUMPY_SEED_4 = Preset(
    key="numpy-seed-4",
    name="np.random.seed(4); np.random.randn(6, 4)",
    tokens=("x1", "x2", "x3", "x4", "x5", "x6"),
    embeddings=(
        (0.05056171, 0.49995133, -0.99590893, 0.69359851),
        (-0.41830152, -1.58457724, -0.64770677, 0.59857517),
        (0.33225003, -1.14747663, 0.61866969, -0.08798693),
        (0.4250724, 0.33225315, -1.15681626, 0.35099715),
        (-0.60688728, 1.54697933, 0.72334161, 0.04613557),
        (-0.98299165, 0.05443274, 0.15989294, -1.20894816),
    ),
    source="004_9f552c0b9e145459.txt",
    origin="Six random 4-d vectors from numpy's legacy generator with seed 4, printed in the numpy "
    "“Self Attention is good” tutorial notebook ('We hate loops!').",
    lesson="Loops and matrices give the same attention; the tutorial's softmax down columns "
    "(axis=0) is the wrong axis.",
    query_index=0,
    notes=(
        "The tutorial normalises with axis=0, so its columns sum to 1, then reads rows: its printed "
        "weights and outputs are not attention. The lab normalises rows.",
    ),
    printed={
        # Printed after normalising down columns (axis=0): wrong axis, kept to show the pitfall.
        "wrong_axis_weights": (
            (0.41676423, 0.03317058, 0.02581661, 0.36795706, 0.03431829, 0.02264204),
            (0.09500843, 0.82755424, 0.30216376, 0.09750615, 0.0023233, 0.03800751),
            (0.0216077, 0.08829633, 0.54601934, 0.02816939, 0.00701479, 0.05226323),
            (0.36149091, 0.03344438, 0.03306499, 0.435864, 0.01848149, 0.02289683),
            (0.07837035, 0.00185235, 0.01913955, 0.04295988, 0.86969345, 0.13172454),
            (0.02675839, 0.01568212, 0.07379574, 0.02754352, 0.06816868, 0.73246585),
        ),
        "wrong_axis_outputs": (
            (0.1290987, 0.30275356, -0.81778664, 0.41001273),
            (-0.23829336, -1.5724902, -0.54873169, 0.52304713),
            (0.1019155, -0.73259804, 0.23993999, -0.03317603),
            (0.16682378, 0.26444536, -0.84840296, 0.39399784),
            (-0.62948215, 1.38112546, 0.53304216, -0.05026326),
            (-0.73035879, 0.05832655, 0.14341142, -0.8512471),
        ),
    },
)

PRESETS: tuple[Preset, ...] = (JOURNEY, LIGHT, TRANSFORMER, ONE_HOT, NUMPY_SEED_4)
PRESETS_BY_KEY: dict[str, Preset] = {preset.key: preset for preset in PRESETS}
DEFAULT_PRESET = JOURNEY

SCALING_EXAMPLE = WorkedExample(
    key="scaled-dot-product",
    name="The scaled_dot_product tutorial's Q, K, V (given directly)",
    tokens=("t1", "t2", "t3"),
    Q=((1.0463, -1.2652), (0.0063, 0.9499), (-0.7820, -0.7173)),
    K=((-1.1701, -1.6579), (-0.9172, -0.2540), (-0.1772, 0.1998)),
    V=((-0.5293, 0.1230), (-0.7970, 1.0645), (-0.6991, 0.2718)),
    source="003_0f5cd8518664bcc3.txt",
    origin="Random Q, K, V (seq_len 3, d_k 2) printed in the “scaled_dot_product” tutorial notebook, in the style of "
    "the UvA deep learning tutorial on transformers.",
    lesson="Q K^T, division by sqrt(d_k), softmax by rows (rows sum to 1, columns do not), weights times V.",
    printed={
        "scores": ((0.8733, -0.6383, -0.4382), (-1.5822, -0.2471, 0.1887), (2.1042, 0.8994, -0.0047)),
        "scaled_scores": ((0.6175, -0.4514, -0.3098), (-1.1188, -0.1747, 0.1334), (1.4879, 0.636, -0.0034)),
        "weights": ((0.575, 0.1975, 0.2275), (0.1415, 0.3637, 0.4949), (0.6054, 0.2583, 0.1363)),
        "context": ((-0.6208, 0.3428), (-0.7107, 0.539), (-0.6216, 0.3864)),
        "t1_scaled_exps": (1.8543, 0.6368, 0.7336),
        "t2_column_sum": (0.8194,),
        # Printed in the last cells from another run whose inputs are not shown:
        "other_run_t3_weights": (0.4905, 0.4635, 0.046),
    },
)
