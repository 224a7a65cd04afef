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

/// Most pieces one box is cut into by [`Program::run_in_parts`], whatever the caller
/// asks (each piece is a small allocation and a hand-off).
const MAX_PIECES: usize = 1 << 10;

/// Elements per side of a block of the plane kernel for whole-byte elements: 64 × 64
/// four-byte elements are 16 KiB read and 16 KiB written, inside a first-level cache.
const BLOCK_BYTES: usize = 256;

/// Tiles a side of a macro block of the tiled plane kernel for whole-byte elements: a
/// block of 8 x 8 tiles of 16 four-byte rows touches 128 pages on each side.
const MACRO: u64 = 8;

/// Tiles a side of a macro block of the packed 4-bit plane kernel, whose tiles have 128
/// rows: 4 x 4 tiles touch 512 pages on each side, inside the second-level TLB.
const MACRO_NIBBLES: u64 = 4;

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

impl Program {
    /// As [`run`](Self::run), with every box of at least `min_split` elements cut into
    /// up to `parts` pieces along its outermost destination atom ([`split`]), moved side
    /// by side on rayon's pool. Boxes run one after another (their destinations may
    /// interleave); a box that cannot be cut into byte-aligned pieces of disjoint
    /// destination bytes runs whole.
    pub(crate) fn run_in_parts(
        &self,
        src: &[u8],
        dst: &mut [u8],
        plans: (&LayoutPlan, &LayoutPlan),
        parts: usize,
        min_split: u64,
    ) {
        use rayon::prelude::*;
        let Program::Blocks {
            blocks,
            mover,
            conv,
        } = self
        else {
            return self.run(src, dst, plans.0, plans.1);
        };
        let k = Kernel {
            mover: *mover,
            conv: *conv,
        };
        for block in blocks {
            let pieces = (parts > 1)
                .then(|| split(block, parts, min_split, conv.dst_bits, dst.len()))
                .flatten();
            let Some(pieces) = pieces else {
                k.block(src, dst, block);
                continue;
            };
            // Consecutive byte ranges, so each piece gets its own slice of `dst`.
            let (first, last) = (pieces[0].0, pieces[pieces.len() - 1].1);
            let mut rest = &mut dst[first..last];
            let mut jobs = Vec::with_capacity(pieces.len());
            for (start, end, piece) in pieces {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
                jobs.push((head, piece));
                rest = tail;
            }
            jobs.into_par_iter()
                .for_each(|(part, piece)| k.block(src, part, &piece));
        }
    }
}

/// Cuts `block` into up to `parts` pieces along its outermost destination atom: piece
/// `p` takes a consecutive range of that atom's values, so its destination slots lie in
/// `[d0 + k0·ds, d0 + k1·ds)` when everything inside one value spans less than `ds`.
/// Each piece comes with its byte range of the destination (consecutive, starting on a
/// byte) and its block with destination slots counted from the start of that range.
/// `None` when the block has fewer than `min_split` elements or the cut is not clean.
fn split(
    block: &Block,
    parts: usize,
    min_split: u64,
    bits: u64,
    dst_len: usize,
) -> Option<Vec<(usize, usize, Block)>> {
    let (&outer, inner) = block.atoms.split_first()?;
    let elements = block
        .atoms
        .iter()
        .try_fold(1u64, |acc, a| acc.checked_mul(a.n))?;
    if elements < min_split || outer.n < 2 {
        return None;
    }
    let span = inner
        .iter()
        .try_fold(0u64, |acc, a| acc.checked_add((a.n - 1).checked_mul(a.ds)?))?;
    if span >= outer.ds {
        return None;
    }
    let bit = |slot: u64| u128::from(slot) * u128::from(bits);
    let byte = |slot: u64| {
        let b = bit(slot);
        (b % 8 == 0).then(|| usize::try_from(b / 8).ok()).flatten()
    };
    let p = u64::try_from(parts.min(MAX_PIECES)).ok()?.min(outer.n);
    let cut = |i: u64| u64::try_from(u128::from(outer.n) * u128::from(i) / u128::from(p)).ok();
    let mut pieces = Vec::with_capacity(p as usize);
    for i in 0..p {
        let (k0, k1) = (cut(i)?, cut(i + 1)?);
        let start = byte(block.d0.checked_add(k0.checked_mul(outer.ds)?)?)?;
        let end = if i + 1 == p {
            // Up to the byte holding the block's last slot.
            let last = block
                .d0
                .checked_add((outer.n - 1).checked_mul(outer.ds)?)?
                .checked_add(span)?;
            usize::try_from((bit(last) + u128::from(bits)).div_ceil(8)).ok()?
        } else {
            byte(block.d0.checked_add(k1.checked_mul(outer.ds)?)?)?
        };
        let mut atoms = block.atoms.clone();
        atoms[0].n = k1 - k0;
        pieces.push((
            start,
            end,
            Block {
                s0: block.s0.checked_add(k0.checked_mul(outer.ss)?)?,
                d0: 0,
                atoms,
            },
        ));
    }
    (pieces.last()?.1 <= dst_len).then_some(pieces)
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
/// read whole into a tile on the stack, transposed there ([`tile`]: shifts and masks on
/// 64-bit words for 1-, 2- and 4-byte elements, element moves for wider ones), and `T`
/// destination rows written whole, so every line is read once and written once whatever
/// the strides
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
    let (ss, ds) = (i.ss as usize * W, j.ds as usize * W);
    let (mut r64, mut r32, mut r16) = ([[0u64; 8]; 64], [[0u64; 8]; 32], [[0u64; 8]; 16]);
    walk_tiles(ti, tj, MACRO, |it, jt| {
        let s0 = (s + jt * t + it * t * i.ss) as usize * W;
        let d0 = (d + jt * t * j.ds + it * t) as usize * W;
        match W {
            1 => tile::<8, 64>(src, s0, ss, dst, d0, ds, &mut r64),
            2 => tile::<4, 32>(src, s0, ss, dst, d0, ds, &mut r32),
            4 => tile::<2, 16>(src, s0, ss, dst, d0, ds, &mut r16),
            _ => tile_elements::<W, T>(src, s0, ss, dst, d0, ds),
        }
    });
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

/// Walks the `ti` x `tj` tiles of a plane in macro blocks of `m` x `m` tiles (those
/// of `j` outermost, then those of `i`; inside a block, the tiles along `j` innermost, so
/// that consecutive tiles read the next line of the same source rows), so that the pages
/// one block touches stay in the TLB.
#[inline(always)]
fn walk_tiles(ti: u64, tj: u64, m: u64, mut f: impl FnMut(u64, u64)) {
    let mut jm = 0;
    while jm < tj {
        let je = (jm + m).min(tj);
        let mut im = 0;
        while im < ti {
            let ie = (im + m).min(ti);
            for it in im..ie {
                for jt in jm..je {
                    f(it, jt);
                }
            }
            im = ie;
        }
        jm = je;
    }
}

/// The mask of the low `sh` bits of every `2·sh` bits of a word.
const fn low_halves(sh: u32) -> u64 {
    match sh {
        32 => 0x0000_0000_FFFF_FFFF,
        16 => 0x0000_FFFF_0000_FFFF,
        8 => 0x00FF_00FF_00FF_00FF,
        4 => 0x0F0F_0F0F_0F0F_0F0F,
        2 => 0x3333_3333_3333_3333,
        _ => 0x5555_5555_5555_5555,
    }
}

/// One level of the in-register transposition of `K` x `K` blocks of `64 / K`-bit
/// elements, on whole tile rows of eight words: for every pair of rows `r`, `r + H`
/// (`r & H == 0` inside each group of `K` rows), the high `H` elements of each `2·H` in
/// row `r` are swapped with the low ones in row `r + H`. Plain loops over eight words,
/// which the optimizer turns into vector instructions.
#[inline(always)]
fn swap_level<const K: usize, const H: usize, const T: usize>(rows: &mut [[u64; 8]; T]) {
    let sh = (H * 64 / K) as u32;
    let m = low_halves(sh);
    for group in rows.chunks_exact_mut(2 * H) {
        let (lo, hi) = group.split_at_mut(H);
        for (x, y) in lo.iter_mut().zip(hi) {
            for (a, b) in x.iter_mut().zip(y.iter_mut()) {
                let t = ((*a >> sh) ^ *b) & m;
                *b ^= t;
                *a ^= t << sh;
            }
        }
    }
}

/// One tile of `T = 8·K` x `T` elements of `64 / K` bits (64 bytes a row on each side):
/// source rows at byte `s + r·ss`, destination rows at byte `d + c·ds`. The source rows
/// are read whole into `rows` (independent loads that overlap), each `K` x `K` block (one
/// word of each of `K` rows) is transposed in place, level by level on whole rows, and
/// then destination row `b·K + e` is word `b` of rows `a·K + e` for the eight `a`.
#[inline(always)]
fn tile<const K: usize, const T: usize>(
    src: &[u8],
    s: usize,
    ss: usize,
    dst: &mut [u8],
    d: usize,
    ds: usize,
    rows: &mut [[u64; 8]; T],
) {
    for (r, row) in rows.iter_mut().enumerate() {
        let off = s + r * ss;
        for (w, bytes) in row.iter_mut().zip(src[off..off + 64].chunks_exact(8)) {
            *w = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        }
    }
    if K >= 16 {
        swap_level::<K, 8, T>(rows);
    }
    if K >= 8 {
        swap_level::<K, 4, T>(rows);
    }
    if K >= 4 {
        swap_level::<K, 2, T>(rows);
    }
    if K >= 2 {
        swap_level::<K, 1, T>(rows);
    }
    // Destination row `b·K + e` (`c` here), word `a`: word `b` of row `a·K + e`.
    for c in 0..T {
        let (b, e) = (c / K, c % K);
        let off = d + c * ds;
        let out: &mut [u8; 64] = (&mut dst[off..off + 64]).try_into().expect("64 bytes");
        for (a, chunk) in out.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&rows[a * K + e][b].to_le_bytes());
        }
    }
}

/// One tile of `T` x `T` elements of `W` bytes (`W·T = 64`), element by element through
/// a stack buffer: for wide elements, where each move is already a whole word.
#[inline(always)]
fn tile_elements<const W: usize, const T: usize>(
    src: &[u8],
    s: usize,
    ss: usize,
    dst: &mut [u8],
    d: usize,
    ds: usize,
) {
    let mut tile = [[[0u8; W]; T]; T];
    for (ii, off) in (0..T).map(|ii| (ii, s + ii * ss)) {
        for (slot, e) in tile.iter_mut().zip(src[off..off + T * W].chunks_exact(W)) {
            slot[ii].copy_from_slice(e);
        }
    }
    for (jj, row) in tile.iter().enumerate() {
        let off = d + jj * ds;
        dst[off..off + T * W].copy_from_slice(row.as_flattened());
    }
}

/// The plane kernel for packed 4-bit elements, in tiles of 128 x 128 elements (64
/// bytes a row on each side) transposed by [`tile`] as 16 x 16 blocks of nibbles in
/// 64-bit words (four levels of shifts and masks). Needs every row to start on a byte
/// (even offsets and strides); `false` otherwise or when the plane is smaller than a
/// tile.
fn plane_nibbles(src: &[u8], s: u64, dst: &mut [u8], d: u64, i: Atom, j: Atom) -> bool {
    const T: u64 = 128;
    if i.n < T || j.n < T || s % 2 != 0 || i.ss % 2 != 0 || d % 2 != 0 || j.ds % 2 != 0 {
        return false;
    }
    let (ti, tj) = (i.n / T, j.n / T);
    let (ss, ds) = ((i.ss / 2) as usize, (j.ds / 2) as usize);
    let mut rows = [[0u64; 8]; 128];
    walk_tiles(ti, tj, MACRO_NIBBLES, |it, jt| {
        let s0 = ((s + jt * T + it * T * i.ss) / 2) as usize;
        let d0 = ((d + jt * T * j.ds + it * T) / 2) as usize;
        tile::<16, 128>(src, s0, ss, dst, d0, ds, &mut rows);
    });
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

#[cfg(test)]
mod tests {
    use super::super::Relayout;
    use crate::{ArrayShape, Shape};

    fn array(text: &str) -> ArrayShape {
        match text.parse::<Shape>() {
            Ok(Shape::Array(a)) => a,
            other => panic!("{text}: {other:?}"),
        }
    }

    /// The fast path against the element-by-element reference, byte for byte.
    #[track_caller]
    fn same(from: &str, to: &str) {
        let r = Relayout::new(&array(from), &array(to)).unwrap();
        let src: Vec<u8> = (0..r.source_bytes())
            .map(|i| (i * 131 + i / 257) as u8)
            .collect();
        let mut fast = vec![0x5A; r.destination_bytes()];
        let mut reference = vec![0xA5; r.destination_bytes()];
        r.run(&src, &mut fast).unwrap();
        r.run_reference(&src, &mut reference).unwrap();
        assert!(fast == reference, "{from} -> {to} ({})", r.strategy());
    }

    /// The word-transposing tiles: every element width, sizes that are not multiples of
    /// a tile (partial macro blocks and edges), and planes at offsets that are not
    /// multiples of a tile (a third dimension outside the plane).
    #[test]
    fn tiled_planes_match_the_reference() {
        for (from, to) in [
            ("u8[200,130]{1,0}", "u8[200,130]{0,1}"),
            ("u8[64,64]{1,0}", "u8[64,64]{0,1}"),
            ("bf16[96,70]{1,0}", "bf16[96,70]{0,1}"),
            ("f32[300,257]{1,0}", "f32[300,257]{0,1}"),
            ("f32[150,140]{1,0}", "f32[150,140]{0,1}"),
            ("f32[3,40,50]{2,1,0}", "f32[3,40,50]{1,2,0}"),
            ("f32[17,33,48]{2,1,0}", "f32[17,33,48]{1,0,2}"),
            ("f64[40,50]{1,0}", "f64[40,50]{0,1}"),
            ("c128[20,30]{1,0}", "c128[20,30]{0,1}"),
            ("f32[5,36,36,5]{3,2,1,0}", "f32[5,36,36,5]{1,3,0,2}"),
            ("s4[128,128]{1,0:E(4)}", "s4[128,128]{0,1:E(4)}"),
            ("s4[300,270]{1,0:E(4)}", "s4[300,270]{0,1:E(4)}"),
            ("s4[640,260]{1,0:E(4)}", "s4[640,260]{0,1:E(4)}"),
            ("s4[2,257,258]{2,1,0:E(4)}", "s4[2,257,258]{2,0,1:E(4)}"),
            ("s4[3,130,132]{2,1,0:E(4)}", "s4[3,130,132]{1,2,0:E(4)}"),
        ] {
            same(from, to);
            same(to, from);
        }
    }
}
