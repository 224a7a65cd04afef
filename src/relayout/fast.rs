//! The fast path of [`Relayout::run`](super::Relayout::run).
//!
//! Both plans are digit plans of plain logical indices: the slot of an element is
//! `Σ ((index[k] / div) mod modulus) × stride` on each side. Each dimension is split at
//! every divisor of either side into *atoms*, `index[k] = Σ a_j × D_j`, which works when
//! the divisors of the two sides nest (each divides the next). An atom lies inside one
//! digit of each side, so it has one stride on each side, and a slot is a plain sum of
//! atom × stride. Where a dimension is not a multiple of its top divisor (a partial edge
//! tile), its range is cut into a few *boxes*, each exact (every combination of atom
//! values is an element). A box is then a strided copy: its atoms sorted by destination
//! stride, neighbours merged where both sides are contiguous, and one of three kernels
//! for the innermost atoms: a contiguous run on both sides (`copy_from_slice`, a whole
//! tile when tiles match), a plane between the destination's and the source's
//! contiguous atoms copied in cache-sized blocks, or a strided loop.
//!
//! Plans the atoms cannot describe walk both layouts' logical orders together.

use super::bits::Conv;
use crate::index::{DimDigit, LayoutPlan};

/// Most boxes one move is cut into (partial tiles in many dimensions); beyond that the
/// logical-order walk is used.
const MAX_BOXES: usize = 1 << 12;

/// Elements per side of a block of the plane kernel for whole-byte elements: 64 × 64
/// four-byte elements are 16 KiB read and 16 KiB written, inside a first-level cache.
const BLOCK_BYTES: usize = 256;

/// Tiles a side of a macro block of the tiled plane kernel.
const MACRO: u64 = 8;

/// One atom: `n` values, `ss` slots apart in the source and `ds` in the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Atom {
    n: u64,
    ss: u64,
    ds: u64,
}

/// One exact box: base slots and atoms, outermost (largest destination stride) first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    s0: u64,
    d0: u64,
    atoms: Vec<Atom>,
}

/// How one element moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mover {
    /// Equal slot widths of this many whole bytes.
    Bytes(usize),
    /// Equal slot widths of 1, 2 or 4 bits.
    Packed(u64),
    /// Anything else: bit by bit through [`Conv::move_element`].
    Bits,
}

/// The compiled fast path.
#[derive(Clone, Debug)]
pub(crate) enum Program {
    /// Exact boxes of strided copies.
    Blocks {
        blocks: Vec<Block>,
        mover: Mover,
        conv: Conv,
    },
    /// Both logical orders walked together.
    Walk { mover: Mover, conv: Conv },
}

impl Program {
    pub(crate) fn new(src: &LayoutPlan, dst: &LayoutPlan, conv: Conv) -> Self {
        let mover = if conv.src_bits != conv.dst_bits {
            Mover::Bits
        } else if conv.src_bits % 8 == 0 {
            usize::try_from(conv.src_bits / 8).map_or(Mover::Bits, Mover::Bytes)
        } else if matches!(conv.src_bits, 1 | 2 | 4) {
            Mover::Packed(conv.src_bits)
        } else {
            Mover::Bits
        };
        match build(src, dst) {
            Some(blocks) => Program::Blocks {
                blocks,
                mover,
                conv,
            },
            None => Program::Walk { mover, conv },
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Program::Blocks { blocks, mover, .. } => {
                let atoms = blocks.iter().map(|b| b.atoms.len()).max().unwrap_or(0);
                format!(
                    "{} box(es) of up to {atoms} strided loop(s), {}",
                    blocks.len(),
                    mover_name(*mover)
                )
            }
            Program::Walk { mover, .. } => {
                format!(
                    "both logical orders walked together, {}",
                    mover_name(*mover)
                )
            }
        }
    }

    /// Moves every element. Buffers have been checked against the plans' sizes, and
    /// every box against the buffers when it was built.
    pub(crate) fn run(&self, src: &[u8], dst: &mut [u8], splan: &LayoutPlan, dplan: &LayoutPlan) {
        match self {
            Program::Blocks {
                blocks,
                mover,
                conv,
            } => {
                let k = Kernel {
                    mover: *mover,
                    conv: *conv,
                };
                for block in blocks {
                    k.block(src, dst, block);
                }
            }
            Program::Walk { mover, conv } => {
                let k = Kernel {
                    mover: *mover,
                    conv: *conv,
                };
                for (s, d) in splan.logical_order().zip(dplan.logical_order()) {
                    k.one(src, s, dst, d);
                }
            }
        }
    }
}

fn mover_name(mover: Mover) -> String {
    match mover {
        Mover::Bytes(w) => format!("{w}-byte elements"),
        Mover::Packed(b) => format!("{b}-bit packed elements"),
        Mover::Bits => "bit-level element moves".to_string(),
    }
}

/// The boxes of the move, or `None` where atoms cannot describe it.
fn build(src: &LayoutPlan, dst: &LayoutPlan) -> Option<Vec<Block>> {
    let dims = src.dimensions();
    let sd = src.dimension_digits()?;
    let dd = dst.dimension_digits()?;
    let mut blocks = vec![Block {
        s0: 0,
        d0: 0,
        atoms: Vec::new(),
    }];
    for (k, &d) in dims.iter().enumerate() {
        if d == 0 {
            return Some(Vec::new());
        }
        if d == 1 {
            continue;
        }
        let (s_digits, d_digits) = (sd.get(k)?, dd.get(k)?);
        let mut bps = vec![1u64];
        for &(div, modulus, _) in s_digits.iter().chain(d_digits) {
            if div < d {
                bps.push(div);
            }
            if let Some(top) = modulus.and_then(|m| div.checked_mul(m)) {
                if top < d {
                    bps.push(top);
                }
            }
        }
        bps.sort_unstable();
        bps.dedup();
        if bps.windows(2).any(|w| w[1] % w[0] != 0) {
            return None;
        }
        let ss = atom_strides(s_digits, &bps, d)?;
        let ds = atom_strides(d_digits, &bps, d)?;
        let mut boxes = Vec::new();
        dim_boxes(d, &bps, &ss, &ds, 0, 0, &mut boxes)?;
        if blocks.len().checked_mul(boxes.len())? > MAX_BOXES {
            return None;
        }
        let mut next = Vec::with_capacity(blocks.len() * boxes.len());
        for b in &blocks {
            for x in &boxes {
                let mut atoms = b.atoms.clone();
                atoms.extend_from_slice(&x.atoms);
                next.push(Block {
                    s0: b.s0.checked_add(x.s0)?,
                    d0: b.d0.checked_add(x.d0)?,
                    atoms,
                });
            }
        }
        blocks = next;
    }
    let mut total: u64 = 0;
    for block in &mut blocks {
        normalize(&mut block.atoms);
        // Every slot inside the buffers (a bug here must not become a panic).
        let (mut s_max, mut d_max) = (block.s0, block.d0);
        let mut n: u64 = 1;
        for a in &block.atoms {
            s_max = s_max.checked_add((a.n - 1).checked_mul(a.ss)?)?;
            d_max = d_max.checked_add((a.n - 1).checked_mul(a.ds)?)?;
            n = n.checked_mul(a.n)?;
        }
        if s_max >= src.allocated_elements() || d_max >= dst.allocated_elements() {
            return None;
        }
        total = total.checked_add(n)?;
    }
    (total == src.element_count()).then_some(blocks)
}

/// The stride of each atom on one side: atom `j` covers `[bps[j], bps[j+1])` (the top
/// one up to the dimension's size) and lies inside one digit of that side.
fn atom_strides(digits: &[DimDigit], bps: &[u64], d: u64) -> Option<Vec<u64>> {
    bps.iter()
        .enumerate()
        .map(|(j, &lo)| {
            let hi = bps.get(j + 1).copied().unwrap_or(d);
            digits
                .iter()
                .find(|&&(div, modulus, _)| {
                    div <= lo
                        && lo % div == 0
                        && modulus.is_none_or(|m| div.saturating_mul(m) >= hi)
                })
                .and_then(|&(div, _, stride)| stride.checked_mul(lo / div))
        })
        .collect()
}

/// Cuts `[0, d)` of one dimension into exact boxes: the whole top atoms, then the rest
/// (a partial edge tile) recursively on the lower atoms.
fn dim_boxes(
    d: u64,
    bps: &[u64],
    ss: &[u64],
    ds: &[u64],
    s0: u64,
    d0: u64,
    out: &mut Vec<Block>,
) -> Option<()> {
    let levels = bps.iter().take_while(|&&b| b < d).count();
    if levels == 0 {
        out.push(Block {
            s0,
            d0,
            atoms: Vec::new(),
        });
        return Some(());
    }
    let m = levels - 1;
    let top = bps[m];
    let (q, r) = (d / top, d % top);
    let mut atoms: Vec<Atom> = (0..m)
        .map(|j| Atom {
            n: bps[j + 1] / bps[j],
            ss: ss[j],
            ds: ds[j],
        })
        .collect();
    atoms.push(Atom {
        n: q,
        ss: ss[m],
        ds: ds[m],
    });
    out.push(Block { s0, d0, atoms });
    if r > 0 {
        dim_boxes(
            r,
            &bps[..m],
            ss,
            ds,
            s0.checked_add(q.checked_mul(ss[m])?)?,
            d0.checked_add(q.checked_mul(ds[m])?)?,
            out,
        )?;
    }
    Some(())
}

/// Drops atoms of one value, sorts by destination stride (outermost first) and merges
/// neighbours that are contiguous on both sides.
fn normalize(atoms: &mut Vec<Atom>) {
    atoms.retain(|a| a.n > 1);
    atoms.sort_by(|a, b| b.ds.cmp(&a.ds).then(b.ss.cmp(&a.ss)));
    let mut merged: Vec<Atom> = Vec::with_capacity(atoms.len());
    for &a in atoms.iter() {
        if let Some(outer) = merged.last_mut() {
            if a.n.checked_mul(a.ss) == Some(outer.ss) && a.n.checked_mul(a.ds) == Some(outer.ds) {
                outer.n *= a.n;
                outer.ss = a.ss;
                outer.ds = a.ds;
                continue;
            }
        }
        merged.push(a);
    }
    *atoms = merged;
}

/// Calls `f(source slot, destination slot)` for every combination of `atoms`.
fn odometer(atoms: &[Atom], s0: u64, d0: u64, mut f: impl FnMut(u64, u64)) {
    let mut index = vec![0u64; atoms.len()];
    let (mut s, mut d) = (s0, d0);
    loop {
        f(s, d);
        let mut k = atoms.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let a = atoms[k];
            index[k] += 1;
            s += a.ss;
            d += a.ds;
            if index[k] < a.n {
                break;
            }
            index[k] = 0;
            s -= a.ss * a.n;
            d -= a.ds * a.n;
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Kernel {
    mover: Mover,
    conv: Conv,
}

impl Kernel {
    /// One element.
    #[inline]
    fn one(&self, src: &[u8], s: u64, dst: &mut [u8], d: u64) {
        match self.mover {
            Mover::Bytes(w) => {
                let (s, d) = (s as usize * w, d as usize * w);
                dst[d..d + w].copy_from_slice(&src[s..s + w]);
            }
            Mover::Packed(_) | Mover::Bits => self.conv.move_element(src, s, dst, d),
        }
    }

    fn block(&self, src: &[u8], dst: &mut [u8], block: &Block) {
        let Some((&inner, outer)) = block.atoms.split_last() else {
            self.one(src, block.s0, dst, block.d0);
            return;
        };
        if inner.ds == 1 && inner.ss == 1 {
            odometer(outer, block.s0, block.d0, |s, d| {
                self.run(src, s, dst, d, inner.n)
            });
            return;
        }
        if inner.ds == 1 {
            if let Some(j) = outer.iter().rposition(|a| a.ss == 1) {
                let across = outer[j];
                let mut rest: Vec<Atom> = outer
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != j)
                    .map(|(_, &a)| a)
                    .collect();
                // A large plane writes a long stretch of the destination at once:
                // then step the planes along the source (smallest source stride
                // innermost), so that consecutive planes read neighbouring bytes of
                // the same pages. Small planes (the (2,1) sub-tiles) keep the writes
                // in order.
                if inner.n.saturating_mul(across.n) >= 1024 {
                    rest.sort_by_key(|a| std::cmp::Reverse(a.ss));
                }
                odometer(&rest, block.s0, block.d0, |s, d| {
                    self.plane(src, s, dst, d, inner, across);
                });
                return;
            }
        }
        odometer(outer, block.s0, block.d0, |s, d| {
            self.strided(src, s, dst, d, inner);
        });
    }

    /// `n` slots contiguous on both sides.
    fn run(&self, src: &[u8], s: u64, dst: &mut [u8], d: u64, n: u64) {
        match self.mover {
            Mover::Bytes(w) => {
                let (s, d, len) = (s as usize * w, d as usize * w, n as usize * w);
                dst[d..d + len].copy_from_slice(&src[s..s + len]);
            }
            Mover::Packed(b) => super::bits::copy_bits(
                src,
                u128::from(s) * u128::from(b),
                dst,
                u128::from(d) * u128::from(b),
                n * b,
            ),
            Mover::Bits => {
                for k in 0..n {
                    self.conv.move_element(src, s + k, dst, d + k);
                }
            }
        }
    }

    /// One strided loop.
    fn strided(&self, src: &[u8], s: u64, dst: &mut [u8], d: u64, a: Atom) {
        match self.mover {
            Mover::Bytes(w) => bytes_dispatch(w, src, dst, s, d, a),
            _ => {
                for k in 0..a.n {
                    self.one(src, s + k * a.ss, dst, d + k * a.ds);
                }
            }
        }
    }

    /// The plane of `i` (contiguous in the destination) and `j` (contiguous in the
    /// source), in blocks that stay in cache.
    fn plane(&self, src: &[u8], s: u64, dst: &mut [u8], d: u64, i: Atom, j: Atom) {
        if let Mover::Bytes(w) = self.mover {
            let done = match w {
                1 => plane_bytes::<1, 64>(src, s, dst, d, i, j),
                2 => plane_bytes::<2, 32>(src, s, dst, d, i, j),
                4 => plane_bytes::<4, 16>(src, s, dst, d, i, j),
                8 => plane_bytes::<8, 8>(src, s, dst, d, i, j),
                16 => plane_bytes::<16, 4>(src, s, dst, d, i, j),
                _ => false,
            };
            if done {
                return;
            }
        }
        if self.mover == Mover::Packed(4) && plane_nibbles(src, s, dst, d, i, j) {
            return;
        }
        let (bi, bj) = match self.mover {
            Mover::Bytes(w) => {
                let b = (BLOCK_BYTES / w).max(8) as u64;
                (b, b)
            }
            _ => (256, 64),
        };
        let mut jb = 0;
        while jb < j.n {
            let jn = bj.min(j.n - jb);
            let mut ib = 0;
            while ib < i.n {
                let in_ = bi.min(i.n - ib);
                let (s, d) = (s + jb * j.ss + ib * i.ss, d + jb * j.ds + ib * i.ds);
                match self.mover {
                    // Inner loop along the longer side: sequential writes, or sequential
                    // reads when the destination's runs are short (`(2,1)` sub-tiles).
                    Mover::Bytes(w) if in_ >= 8 || in_ >= jn => {
                        for jj in 0..jn {
                            let a = Atom { n: in_, ..i };
                            bytes_dispatch(w, src, dst, s + jj * j.ss, d + jj * j.ds, a);
                        }
                    }
                    Mover::Bytes(w) => {
                        for ii in 0..in_ {
                            let a = Atom { n: jn, ..j };
                            bytes_dispatch(w, src, dst, s + ii * i.ss, d + ii * i.ds, a);
                        }
                    }
                    Mover::Packed(b) => {
                        for jj in 0..jn {
                            packed_row(b, src, s + jj * j.ss, i.ss, dst, d + jj * j.ds, in_);
                        }
                    }
                    Mover::Bits => {
                        for jj in 0..jn {
                            for ii in 0..in_ {
                                self.conv.move_element(
                                    src,
                                    s + jj * j.ss + ii * i.ss,
                                    dst,
                                    d + jj * j.ds + ii,
                                );
                            }
                        }
                    }
                }
                ib += in_;
            }
            jb += jn;
        }
    }
}

/// The plane of `i` (destination stride 1) and `j` (source stride 1) for `W`-byte
/// elements, in `T` x `T` tiles of one cache line (64 bytes) a side: `T` source rows
/// read whole into a tile on the stack, transposed there, and `T` destination rows
/// written whole, so every line is read once and written once whatever the strides
/// (power-of-two strides would otherwise evict each other from a set-associative
/// cache). A destination plane that is contiguous with a short `i` (the `(2,1)` and
/// `(4,1)` sub-tiles of TPU layouts) interleaves `i.n` source rows instead. `false` when
/// neither applies (the caller's blocked loops do it).
fn plane_bytes<const W: usize, const T: usize>(
    src: &[u8],
    s: u64,
    dst: &mut [u8],
    d: u64,
    i: Atom,
    j: Atom,
) -> bool {
    let t = T as u64;
    if i.n < t || j.n < t {
        if j.ds == i.n && (2..=8).contains(&i.n) {
            interleave::<W>(src, s, dst, d, i, j);
            return true;
        }
        return false;
    }
    let (ti, tj) = (i.n / t, j.n / t);
    let mut tile = [[[0u8; W]; T]; T];
    let mut rows = [[[0u8; W]; T]; T];
    // Tiles in macro blocks of MACRO x MACRO tiles, so that the pages one macro block
    // touches (MACRO·T rows on each side) stay in the TLB.
    let mut jm = 0;
    while jm < tj {
        let je = (jm + MACRO).min(tj);
        let mut im = 0;
        while im < ti {
            let ie = (im + MACRO).min(ti);
            for it in im..ie {
                for jt in jm..je {
                    let s0 = s + jt * t + it * t * i.ss;
                    let d0 = d + jt * t * j.ds + it * t;
                    // The T rows first (independent loads that overlap), then the
                    // transpose inside the first-level cache.
                    for (ii, row) in rows.iter_mut().enumerate() {
                        let off = (s0 + ii as u64 * i.ss) as usize * W;
                        row.as_flattened_mut()
                            .copy_from_slice(&src[off..off + T * W]);
                    }
                    for (ii, row) in rows.iter().enumerate() {
                        for (slot, element) in tile.iter_mut().zip(row) {
                            slot[ii] = *element;
                        }
                    }
                    for (jj, row) in tile.iter().enumerate() {
                        let off = (d0 + jj as u64 * j.ds) as usize * W;
                        dst[off..off + T * W].copy_from_slice(row.as_flattened());
                    }
                }
            }
            im = ie;
        }
        jm = je;
    }
    // The edges: the rest of `i` for every `j`, then the rest of `j` for the tiled `i`.
    if ti * t < i.n {
        let rest = Atom {
            n: i.n - ti * t,
            ..i
        };
        for jj in 0..j.n {
            strided_bytes::<W>(
                src,
                dst,
                s + jj + ti * t * i.ss,
                d + jj * j.ds + ti * t,
                rest,
            );
        }
    }
    let head = Atom { n: ti * t, ..i };
    for jj in tj * t..j.n {
        strided_bytes::<W>(src, dst, s + jj, d + jj * j.ds, head);
    }
    true
}

/// The plane kernel for packed 4-bit elements, in tiles of 128 x 128 elements (64
/// bytes a row on each side): two source rows at a time, each pair of bytes giving one
/// byte of two destination rows (`lo | hi << 4` and `lo >> 4 | hi & 0xF0`). Needs every
/// row to start on a byte (even offsets and strides); `false` otherwise or when the
/// plane is smaller than a tile.
fn plane_nibbles(src: &[u8], s: u64, dst: &mut [u8], d: u64, i: Atom, j: Atom) -> bool {
    const T: u64 = 128;
    if i.n < T || j.n < T || s % 2 != 0 || i.ss % 2 != 0 || d % 2 != 0 || j.ds % 2 != 0 {
        return false;
    }
    let (ti, tj) = (i.n / T, j.n / T);
    let mut tile = [[0u8; 64]; 128];
    let mut rows = [[0u8; 64]; 128];
    let mut jm = 0;
    while jm < tj {
        let je = (jm + 16).min(tj);
        let mut im = 0;
        while im < ti {
            let ie = (im + 16).min(ti);
            for jt in jm..je {
                for it in im..ie {
                    let s0 = s + jt * T + it * T * i.ss;
                    let d0 = d + jt * T * j.ds + it * T;
                    // All 128 rows first: independent loads the processor overlaps
                    // (row by row, each load's miss would stall the work after it).
                    for (r, row) in rows.iter_mut().enumerate() {
                        let a = ((s0 + r as u64 * i.ss) / 2) as usize;
                        row.copy_from_slice(&src[a..a + 64]);
                    }
                    for p in 0..64 {
                        let (ra, rb) = (&rows[2 * p], &rows[2 * p + 1]);
                        for ((pair, &x), &y) in tile.chunks_exact_mut(2).zip(ra).zip(rb) {
                            pair[0][p] = (x & 0x0F) | (y << 4);
                            pair[1][p] = (x >> 4) | (y & 0xF0);
                        }
                    }
                    for (jj, row) in tile.iter().enumerate() {
                        let off = ((d0 + jj as u64 * j.ds) / 2) as usize;
                        dst[off..off + 64].copy_from_slice(row);
                    }
                }
            }
            im = ie;
        }
        jm = je;
    }
    if ti * T < i.n {
        for jj in 0..j.n {
            let (s, d) = (s + jj + ti * T * i.ss, d + jj * j.ds + ti * T);
            packed_row(4, src, s, i.ss, dst, d, i.n - ti * T);
        }
    }
    for jj in tj * T..j.n {
        packed_row(4, src, s + jj, i.ss, dst, d + jj * j.ds, ti * T);
    }
    true
}

/// A contiguous destination plane of `j.n` groups of `i.n` elements, each group one
/// element from each of `i.n` source rows.
fn interleave<const W: usize>(src: &[u8], s: u64, dst: &mut [u8], d: u64, i: Atom, j: Atom) {
    let (n, m) = (i.n as usize, j.n as usize);
    let d = d as usize * W;
    let out = &mut dst[d..d + n * m * W];
    let row = |ii: usize| {
        let off = (s + ii as u64 * i.ss) as usize * W;
        &src[off..off + m * W]
    };
    if n == 2 {
        let (a, b) = (row(0), row(1));
        for ((o, x), y) in out
            .chunks_exact_mut(2 * W)
            .zip(a.chunks_exact(W))
            .zip(b.chunks_exact(W))
        {
            o[..W].copy_from_slice(x);
            o[W..].copy_from_slice(y);
        }
        return;
    }
    let mut rows: [&[u8]; 8] = [&[]; 8];
    for (ii, r) in rows.iter_mut().enumerate().take(n) {
        *r = row(ii);
    }
    for (jj, group) in out.chunks_exact_mut(n * W).enumerate() {
        for (e, r) in group.chunks_exact_mut(W).zip(&rows) {
            e.copy_from_slice(&r[jj * W..jj * W + W]);
        }
    }
}

/// A strided loop of whole-byte elements, specialised for the common widths.
#[inline]
fn bytes_dispatch(w: usize, src: &[u8], dst: &mut [u8], s: u64, d: u64, a: Atom) {
    match w {
        1 => strided_bytes::<1>(src, dst, s, d, a),
        2 => strided_bytes::<2>(src, dst, s, d, a),
        4 => strided_bytes::<4>(src, dst, s, d, a),
        8 => strided_bytes::<8>(src, dst, s, d, a),
        16 => strided_bytes::<16>(src, dst, s, d, a),
        _ => {
            for k in 0..a.n {
                let (s, d) = ((s + k * a.ss) as usize * w, (d + k * a.ds) as usize * w);
                dst[d..d + w].copy_from_slice(&src[s..s + w]);
            }
        }
    }
}

#[inline]
fn strided_bytes<const W: usize>(src: &[u8], dst: &mut [u8], s: u64, d: u64, a: Atom) {
    let (mut s, ss) = (s as usize * W, a.ss as usize * W);
    let n = a.n as usize;
    if a.ds == 1 {
        let d = d as usize * W;
        for chunk in dst[d..d + n * W].chunks_exact_mut(W) {
            chunk.copy_from_slice(&src[s..s + W]);
            s += ss;
        }
    } else {
        let (mut d, ds) = (d as usize * W, a.ds as usize * W);
        for _ in 0..n {
            dst[d..d + W].copy_from_slice(&src[s..s + W]);
            s += ss;
            d += ds;
        }
    }
}

/// `n` packed `b`-bit elements: source slots `s, s+ss, ...` into destination slots
/// `d, d+1, ...`; whole destination bytes are assembled and written once.
fn packed_row(b: u64, src: &[u8], s: u64, ss: u64, dst: &mut [u8], d: u64, n: u64) {
    // b is 1, 2 or 4: `per` elements a byte, shifts instead of divisions.
    let per = 8 / b;
    let (log, low) = (per.trailing_zeros(), per - 1);
    let bl = b.trailing_zeros();
    let mask = ((1u16 << b) - 1) as u8;
    let get = |slot: u64| (src[(slot >> log) as usize] >> ((slot & low) << bl)) & mask;
    let (mut s, mut d, mut left) = (s, d, n);
    let set = |dst: &mut [u8], slot: u64, v: u8| {
        let shift = (slot & low) << bl;
        let byte = &mut dst[(slot >> log) as usize];
        *byte = (*byte & !(mask << shift)) | (v << shift);
    };
    while left > 0 && d & low != 0 {
        set(dst, d, get(s));
        s += ss;
        d += 1;
        left -= 1;
    }
    while left >= per {
        let mut byte = 0u8;
        for k in 0..per {
            byte |= get(s) << (k << bl);
            s += ss;
        }
        dst[(d >> log) as usize] = byte;
        d += per;
        left -= per;
    }
    while left > 0 {
        set(dst, d, get(s));
        s += ss;
        d += 1;
        left -= 1;
    }
}
