//! Large per-coordinate tables on transparent huge pages (docs/design.md §3.3). A sparse row
//! reads ~100 random coordinates of a table of 2^20 (16 MiB for the diagonal form): on 4 KiB
//! pages that is 4,096 pages, more than the TLB holds, so most of those reads also walk the
//! page tables. On 2 MiB pages the table is 8 pages. Linux backs memory with huge pages only
//! where asked (`/sys/kernel/mm/transparent_hugepage/enabled` is often "madvise"); NumPy asks
//! for its large arrays, which is what scikit-learn's weight vector gets.

/// Tables smaller than this are left as they are (a huge page is 2 MiB on x86-64 and aarch64).
const SMALLEST_ADVISED: usize = 4 << 20;

/// A vector of at most `len` values written by `fill`, its memory advised for transparent huge
/// pages before `fill` first touches it (pages already touched keep their size).
pub(crate) fn vec_on_huge_pages<T>(len: usize, fill: impl FnOnce(&mut Vec<T>)) -> Vec<T> {
    let mut values = Vec::with_capacity(len);
    advise_huge_pages(&mut values);
    fill(&mut values);
    values
}

#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(values: &mut Vec<T>) {
    let bytes = values.capacity().saturating_mul(size_of::<T>());
    if bytes < SMALLEST_ADVISED {
        return;
    }
    // SAFETY: sysconf reads a constant of the system.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        page if page > 0 => page as usize,
        _ => return,
    };
    let start = values.as_mut_ptr() as usize;
    let (first, end) = (start.next_multiple_of(page), (start + bytes) / page * page);
    if end > first {
        // SAFETY: [first, end) lies inside the vector's own allocation. The advice changes how
        // the kernel backs those pages, never what they hold; where it is refused (no THP),
        // nothing changes, so the result is ignored.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_values: &mut Vec<T>) {}

#[cfg(test)]
mod tests {
    use super::vec_on_huge_pages;

    #[test]
    fn the_values_are_those_written() {
        for len in [0, 3, (8 << 20) / 16 + 5] {
            let values = vec_on_huge_pages(len, |v| v.extend((0..len).map(|i| (i, -(i as f64)))));
            assert_eq!(values.len(), len);
            assert!(values
                .iter()
                .enumerate()
                .all(|(i, &(j, x))| i == j && x == -(i as f64)));
        }
    }
}
