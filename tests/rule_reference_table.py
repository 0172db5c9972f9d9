"""Prints the reference tables of the `stable_forms_*` tests in crates/cwrs/src/rules/tests.rs.

Each closed form of the rules is evaluated as printed in docs/design.md §2 (the textbook form, with its
cancellations and squares) in decimal arithmetic on the exact float64 inputs, at 800 and at 1600
digits (the two must round to the same float64), and rounded once to float64. Decimal's exponent
range is unbounded here, so the textbook form is evaluated exactly where float64 overflows.

    python tests/rule_reference_table.py > /tmp/table.rs   # then paste into crates/cwrs/src/rules/tests.rs

Not a test itself (pytest does not collect it); stdlib only.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

PHI_07 = 0.5244005127080407  # Φ⁻¹(0.7)
PHI_09 = 1.2815515655446004  # Φ⁻¹(0.9)
PHI_3 = 3.0


def D(x: float) -> Decimal:
    return Decimal(x)  # exact


def sqrt(z: Decimal) -> Decimal:
    return z.sqrt() if z > 0 else Decimal(0)


def cw(m, v, phi):
    m, v, phi = D(m), D(v), D(phi)
    b = 1 + 2 * phi * m
    return (-b + sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v)


def exact_cw(m, v, phi):
    m, v, phi = D(m), D(v), D(phi)
    psi, zeta = 1 + phi * phi / 2, 1 + phi * phi
    return max(Decimal(0), (-m * psi + sqrt(m * m * phi**4 / 4 + v * phi * phi * zeta)) / (v * zeta))


def scw2(m, v, phi, c):
    m, v, phi, c = D(m), D(v), D(phi), D(c)
    n = v + 1 / (2 * c)
    gamma = phi * sqrt(phi * phi * m * m * v * v + 4 * n * v * (n + v * phi * phi))
    alpha = (-(2 * m * n + phi * phi * m * v) + gamma) / (2 * (n * n + n * v * phi * phi))
    return max(Decimal(0), alpha)


def step_c(alpha, v, phi):
    alpha, v, phi = D(alpha), D(v), D(phi)
    u = (-alpha * v * phi + sqrt(alpha * alpha * v * v * phi * phi + 4 * v)) ** 2 / 4
    return alpha * phi / sqrt(u)


def narow(m, v, b):
    m, v, b = D(m), D(v), D(b)
    r = v / (b * v - 1)
    return (r - m) / (r + v), 1 / r


def evaluate(f, *args):
    """float64 of the exact value of f(*args); checks two precisions agree."""
    values = []
    for prec in (800, 1600):
        with localcontext() as ctx:
            ctx.prec = prec
            ctx.Emax, ctx.Emin = 10**6, -(10**6)
            out = f(*args)
            values.append(tuple(float(x) for x in out) if isinstance(out, tuple) else float(out))
    assert values[0] == values[1], (f.__name__, args, values)
    return values[0]


# (inputs..., textbook_fails): textbook_fails marks the rows where the printed formula in plain
# float64 overflows, cancels or divides by ~0 (the Rust test checks that it really does).
CW = [
    (0.0, 1.0, PHI_07, False),
    (-0.5, 0.3, PHI_07, False),
    (0.1, 2.0, PHI_09, False),
    (-3.0, 7.0, PHI_3, False),
    (0.001, 1e-2, PHI_09, False),
    (-1e3, 1e-2, PHI_07, False),
    (1e9, 1e10, PHI_07, True),  # −b + √(b² + 8φ(φv − m)) cancels 8 digits
    (1e12, 1e13, PHI_09, True),  # cancels 11 digits
    (0.0, 5e300, PHI_07, False),  # v(b + root) of the rationalised form overflows
    (-1e160, 1.0, PHI_07, True),  # b² overflows
    (0.0, 3e-300, PHI_07, True),  # −b + √(b² + 8φ(φv − m)) cancels completely
]

EXACT = [
    (0.0, 1.0, PHI_07, False),
    (-0.5, 0.3, PHI_07, False),
    (0.3, 2.0, PHI_09, False),
    (2.9, 1.0, PHI_3, False),
    (-4.0, 1e-3, PHI_09, False),
    (1e-3, 1e3, PHI_07, False),
    (-1e200, 1.0, PHI_07, True),  # m² overflows
    (-1e140, 1e308, PHI_09, True),  # vφ²ζ overflows
    (1e149, 5e300, PHI_07, False),
    (-1e160, 1e10, PHI_07, True),  # m² overflows
    (-3e-150, 5e-300, PHI_07, False),
    (0.0, 1e-300, PHI_09, False),
]

SCW2 = [
    (0.0, 1.0, PHI_09, 1.0, False),
    (-0.5, 0.3, PHI_09, 1.0, False),
    (0.4, 2.0, PHI_07, 0.5, False),
    (-2.0, 7.0, PHI_3, 10.0, False),
    (0.01, 1e-3, PHI_09, 1e3, False),
    (-1e3, 1e2, PHI_07, 1e-2, False),
    (0.0, 1e120, PHI_09, 1.0, True),  # n·v·n overflows
    (-1e100, 1e300, PHI_09, 1.0, True),  # φ²m²v² overflows
    (1e149, 5e300, PHI_07, 1.0, True),
    (-1e200, 1.0, PHI_09, 1.0, True),  # m² overflows
    (-3e-150, 5e-300, PHI_09, 1.0, False),
]

STEP = [
    (1.0, 1.0, PHI_07, False),
    (0.3, 0.5, PHI_09, False),
    (25.0, 3.0, PHI_3, False),
    (1e-3, 1e-2, PHI_07, False),
    (1e8, 1.0, PHI_07, True),  # −αvφ + √(α²v²φ² + 4v) cancels completely
    (1e4, 1e3, PHI_09, True),  # cancels 10 digits
    (1e-150, 5e300, PHI_07, False),
    (1e-150, 1e305, PHI_07, True),  # α²v² overflows
    (3e140, 1e10, PHI_07, True),  # α²v²φ² overflows
    (1e150, 5e-300, PHI_07, False),
]

NAROW = [
    (0.0, 2.0, 1.0, False),
    (-0.5, 3.5, 1.0, False),
    (1.5, 4.0, 0.7, False),
    (0.2, 100.0, 0.1, False),
    (0.5, 10.000000001, 0.1, True),  # b·v − 1 cancels 10 digits
    (0.5, 1.0 + 2.0**-30, 1.0 - 2.0**-31, True),  # b·v − 1 cancels 9 digits
]


def rust(x: float) -> str:
    r = repr(float(x))
    if r in ("inf", "-inf", "nan"):
        raise ValueError(x)
    return r if ("." in r or "e" in r) else r + ".0"


def main():
    print("// Generated by tests/rule_reference_table.py: the textbook forms in 800-digit decimals.")
    print("#[rustfmt::skip]")
    print("const CW_TABLE: [(f64, f64, f64, f64, bool); %d] = [" % len(CW))
    for m, v, phi, fails in CW:
        print(f"    ({rust(m)}, {rust(v)}, {rust(phi)}, {rust(evaluate(cw, m, v, phi))}, {str(fails).lower()}),")
    print("];")
    print("#[rustfmt::skip]")
    print("const EXACT_TABLE: [(f64, f64, f64, f64, bool); %d] = [" % len(EXACT))
    for m, v, phi, fails in EXACT:
        print(f"    ({rust(m)}, {rust(v)}, {rust(phi)}, {rust(evaluate(exact_cw, m, v, phi))}, {str(fails).lower()}),")
    print("];")
    print("#[rustfmt::skip]")
    print("const SCW2_TABLE: [(f64, f64, f64, f64, f64, bool); %d] = [" % len(SCW2))
    for m, v, phi, c, fails in SCW2:
        a = evaluate(scw2, m, v, phi, c)
        print(f"    ({rust(m)}, {rust(v)}, {rust(phi)}, {rust(c)}, {rust(a)}, {str(fails).lower()}),")
    print("];")
    print("#[rustfmt::skip]")
    print("const STEP_TABLE: [(f64, f64, f64, f64, bool); %d] = [" % len(STEP))
    for alpha, v, phi, fails in STEP:
        c = evaluate(step_c, alpha, v, phi)
        print(f"    ({rust(alpha)}, {rust(v)}, {rust(phi)}, {rust(c)}, {str(fails).lower()}),")
    print("];")
    print("#[rustfmt::skip]")
    print("const NAROW_TABLE: [(f64, f64, f64, f64, f64, bool); %d] = [" % len(NAROW))
    for m, v, b, fails in NAROW:
        alpha, c = evaluate(narow, m, v, b)
        print(f"    ({rust(m)}, {rust(v)}, {rust(b)}, {rust(alpha)}, {rust(c)}, {str(fails).lower()}),")
    print("];")


if __name__ == "__main__":
    main()
