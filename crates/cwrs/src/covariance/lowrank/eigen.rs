//! The symmetric eigen-problem of the low-rank form's shrink (docs/design.md §3.3): Householder
//! reduction to tridiagonal form, then the implicit QL iteration with shifts
//! (EISPACK's tred2 and tql2, as in the public-domain JAMA). About 9n³ flops for n×n, against
//! cyclic Jacobi's ~8n³ per sweep over several sweeps; backward stable, so every eigenvalue is
//! exact to a few ε·‖A‖.

/// Shifted QL iterations allowed per eigenvalue (two or three are usual; the cap only stops
/// a non-finite input from looping).
const MAX_ITERATIONS: usize = 64;

/// The eigen-decomposition of the symmetric n×n matrix `a` (row-major; only read): returns the
/// eigenvalues in descending order, with row r of `vectors` (n×n, row-major) the unit
/// eigenvector of value r.
pub(crate) fn symmetric_eigen(a: &[f64], vectors: &mut [f64], n: usize) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    // z starts as a copy of a; tridiagonalise() leaves the accumulated Householder transform
    // Q (a = Q T Qᵀ) in it, transposed, so that QL's rotations act on contiguous rows.
    let mut z = a[..n * n].to_vec();
    let (mut d, mut e) = (vec![0.0; n], vec![0.0; n]);
    tridiagonalise(&mut z, &mut d, &mut e, n);
    transpose(&mut z, n);
    diagonalise(&mut z, &mut d, &mut e, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| d[j].total_cmp(&d[i]));
    for (new, &old) in order.iter().enumerate() {
        vectors[new * n..(new + 1) * n].copy_from_slice(&z[old * n..(old + 1) * n]);
    }
    order.iter().map(|&i| d[i]).collect()
}

fn transpose(v: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..i {
            v.swap(i * n + j, j * n + i);
        }
    }
}

/// Householder tridiagonalisation (tred2): on return d holds T's diagonal, e[1..] its
/// sub-diagonal (e[0] = 0), and `v` (row-major) the orthogonal Q with a = Q T Qᵀ.
fn tridiagonalise(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    d.copy_from_slice(&v[(n - 1) * n..n * n]);
    for i in (1..n).rev() {
        let scale: f64 = d[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
                v[j * n + i] = 0.0;
            }
        } else {
            for dk in &mut d[..i] {
                *dk /= scale;
                h += *dk * *dk;
            }
            let f = d[i - 1];
            let g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            e[..i].iter_mut().for_each(|x| *x = 0.0);
            // e ← A·u over the leading i×i block (lower triangle of v), u = d[..i].
            for j in 0..i {
                let f = d[j];
                v[j * n + i] = f;
                let mut g = e[j] + v[j * n + j] * f;
                for k in j + 1..i {
                    g += v[k * n + j] * d[k];
                    e[k] += v[k * n + j] * f;
                }
                e[j] = g;
            }
            let mut f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                let (f, g) = (d[j], e[j]);
                for k in j..i {
                    v[k * n + j] -= f * e[k] + g * d[k];
                }
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
            }
        }
        d[i] = h;
    }
    // Accumulate the transformations.
    for i in 0..n - 1 {
        v[(n - 1) * n + i] = v[i * n + i];
        v[i * n + i] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[k * n + i + 1] / h;
            }
            for j in 0..=i {
                let g: f64 = (0..=i).map(|k| v[k * n + i + 1] * v[k * n + j]).sum();
                for k in 0..=i {
                    v[k * n + j] -= g * d[k];
                }
            }
        }
        for k in 0..=i {
            v[k * n + i + 1] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[(n - 1) * n + j];
        v[(n - 1) * n + j] = 0.0;
    }
    v[(n - 1) * n + n - 1] = 1.0;
    e[0] = 0.0;
}

/// The implicit QL iteration on the tridiagonal (d, e) (tql2): on return d holds the
/// eigenvalues and row r of `z` (Qᵀ on entry) the eigenvector of d[r].
fn diagonalise(z: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let (mut shift, mut largest) = (0.0, 0.0f64);
    for l in 0..n {
        largest = largest.max(d[l].abs() + e[l].abs());
        let negligible = |x: f64| x.abs() <= f64::EPSILON * largest;
        // The first negligible sub-diagonal entry at or after l (e[n-1] = 0 ends the search).
        let m = (l..n - 1).find(|&m| negligible(e[m])).unwrap_or(n - 1);
        if m > l {
            for _ in 0..MAX_ITERATIONS {
                let g = d[l];
                let p = (d[l + 1] - g) / (2.0 * e[l]);
                let r = if p < 0.0 { -p.hypot(1.0) } else { p.hypot(1.0) };
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let next = d[l + 1];
                let h = g - d[l];
                d[l + 2..n].iter_mut().for_each(|x| *x -= h);
                shift += h;
                // One QL sweep of plane rotations from m − 1 down to l.
                let mut p = d[m];
                let (mut c, mut c2, mut c3, el1) = (1.0, 1.0, 1.0, e[l + 1]);
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    let h = c * p;
                    let r = p.hypot(e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    let (head, tail) = z.split_at_mut((i + 1) * n);
                    let (zi, zi1) = (&mut head[i * n..], &mut tail[..n]);
                    for (a, b) in zi.iter_mut().zip(zi1.iter_mut()) {
                        let h = *b;
                        *b = s * *a + c * h;
                        *a = c * *a - s * h;
                    }
                }
                let p = -s * s2 * c3 * el1 * e[l] / next;
                e[l] = s * p;
                d[l] = c * p;
                if negligible(e[l]) {
                    break;
                }
            }
        }
        d[l] += shift;
        e[l] = 0.0;
    }
}
