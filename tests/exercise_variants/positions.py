"""Variants of the exercise of notebook 02 (a RoPE rotation step)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, forgets_return, in_float32


def as_complex(x, positions, theta):          # pair i as the complex number a + ib, times e^{i·angle}
    half = x.shape[-1] // 2
    angles = np.outer(positions, theta ** (-2 * np.arange(half) / x.shape[-1]))
    z = (x[:, :half] + 1j * x[:, half:]) * np.exp(1j * angles)
    return np.concatenate([z.real, z.imag], axis=-1)


def pair_by_pair(x, positions, theta):        # loops, one 2 × 2 rotation matrix at a time
    out, D = np.array(x, dtype=float), x.shape[-1]
    for t, m in enumerate(positions):
        for i in range(D // 2):
            c, s = np.cos(m * theta ** (-2 * i / D)), np.sin(m * theta ** (-2 * i / D))
            out[t, [i, i + D // 2]] = np.array([[c, -s], [s, c]]) @ x[t, [i, i + D // 2]]
    return out


def with_angles(angle_of):                    # the right rotation with a wrong angle
    def attempt(x, positions, theta):
        half = x.shape[-1] // 2
        angles = angle_of(np.asarray(positions, dtype=float)[:, None], np.arange(half), x.shape[-1], theta)
        a, b = x[:, :half], x[:, half:]
        return np.concatenate([a * np.cos(angles) - b * np.sin(angles),
                               b * np.cos(angles) + a * np.sin(angles)], axis=-1)
    return attempt


def adjacent(x, positions, theta):            # the llama.cpp layout: pairs (2i, 2i + 1)
    out = np.array(x, dtype=float)
    a, b = x[:, 0::2], x[:, 1::2]
    angles = np.outer(positions, theta ** (-2 * np.arange(x.shape[-1] // 2) / x.shape[-1]))
    out[:, 0::2] = a * np.cos(angles) - b * np.sin(angles)
    out[:, 1::2] = b * np.cos(angles) + a * np.sin(angles)
    return out


VARIANTS = {
    "rope_rotate": (
        [Attempt("the solution", S["rope_rotate"]),
         Attempt("complex numbers times e^{i·angle}", as_complex),
         Attempt("a 2 × 2 rotation matrix per pair, in loops", pair_by_pair),
         Attempt("float32 throughout", in_float32(S["rope_rotate"]))],
        [Attempt("adjacent pairs (2i, 2i + 1)", adjacent, hint="pair i is (i, i + D/2)"),
         Attempt("turns clockwise", lambda x, m, theta: S["rope_rotate"](x, -np.asarray(m), theta),
                 hint="turn counter-clockwise"),
         Attempt("forgets the position: the angle is θ_i alone",
                 with_angles(lambda m, i, D, theta: theta ** (-2 * i / D) + 0 * m)),
         Attempt("θ_i = theta^(−i/D), without the 2", with_angles(lambda m, i, D, theta: m * theta ** (-i / D)),
                 hint="θ_i = theta^(−2i/D)"),
         Attempt("every pair at the same angle m", with_angles(lambda m, i, D, theta: m + 0 * i)),
         Attempt("returns the angles", lambda x, m, theta: np.outer(m, theta ** (-2 * np.arange(x.shape[-1] // 2)
                                                                               / x.shape[-1])),
                 says="you returned shape"),
         forgets_return(S["rope_rotate"])]),
}
