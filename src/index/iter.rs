//! Iteration over every element, in logical order and in memory order.
//!
//! On digit plans whose sources are plain logical indices (every untiled layout and the
//! usual tiled ones), both iterators step incrementally: an index step adds to the
//! digits with carries, a memory step adds to one coordinate; no division per element.
//! Other plans step through [`LayoutPlan::linear_index`] / [`LayoutPlan::multi_index`].

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

use super::compile::{spend, Exhausted};
use super::digits::{AxisKind, Digits};
use super::LayoutPlan;

/// Every element's linear index in logical order; see [`LayoutPlan::logical_order`].
#[derive(Clone, Debug)]
pub struct LogicalOrder<'a> {
    plan: &'a LayoutPlan,
    /// The plan's own coordinates (one per dimension it is built over).
    index: Vec<u64>,
    /// The whole index, when the plan leaves dimensions out.
    whole: Option<Vec<u64>>,
    /// The first of the plan's own coordinates the last step changed.
    changed: usize,
    state: State,
    /// Incremental state for plain digit plans.
    fast: Option<LogicalFast>,
    slot: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Start,
    Running,
    Done,
}

#[derive(Clone, Debug)]
struct LogicalFast {
    /// Per logical dimension, its digit axes by increasing divisor: (stride, modulus).
    digits: Vec<Vec<(u64, Option<u64>)>>,
    /// Current value of each digit, same layout.
    values: Vec<Vec<u64>>,
}

impl<'a> LogicalOrder<'a> {
    pub(super) fn new(plan: &'a LayoutPlan) -> Self {
        let rank = plan.inner_dims().len();
        let fast = plan.digits().filter(|d| d.trivial).map(|d| {
            let mut per_dim: Vec<Vec<(u64, u64, Option<u64>)>> = vec![Vec::new(); rank];
            for axis in &d.axes {
                if let AxisKind::Digit {
                    source,
                    div,
                    modulus,
                } = axis.kind
                {
                    if let Some(list) = per_dim.get_mut(source) {
                        list.push((div, axis.stride, modulus));
                    }
                }
            }
            let digits: Vec<Vec<(u64, Option<u64>)>> = per_dim
                .into_iter()
                .map(|mut list| {
                    list.sort_unstable();
                    list.into_iter().map(|(_, s, m)| (s, m)).collect()
                })
                .collect();
            let values = digits.iter().map(|l| vec![0; l.len()]).collect();
            LogicalFast { digits, values }
        });
        LogicalOrder {
            plan,
            index: vec![0; rank],
            whole: plan.squeeze().map(|_| vec![0; plan.rank()]),
            changed: rank,
            state: State::Start,
            fast,
            slot: 0,
        }
    }

    /// The multi-dimensional index of the element last returned.
    pub fn index(&self) -> &[u64] {
        self.whole.as_deref().unwrap_or(&self.index)
    }
}

impl Iterator for LogicalOrder<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let next = self.step();
        if let (Some(whole), Some(s)) = (&mut self.whole, self.plan.squeeze()) {
            // The coordinates the step changed, from the one it added to: a few, not
            // the whole index (which has every dimension of the shape).
            let changed = self.index.iter().zip(&s.kept).skip(self.changed);
            for (&v, &k) in changed {
                if let Some(slot) = whole.get_mut(k) {
                    *slot = v;
                }
            }
        }
        next
    }
}

impl LogicalOrder<'_> {
    /// The next element, stepping the plan's own coordinates.
    fn step(&mut self) -> Option<u64> {
        match self.state {
            State::Done => return None,
            State::Start => {
                if self.plan.element_count() == 0 {
                    self.state = State::Done;
                    return None;
                }
                self.state = State::Running;
                self.slot = self.plan.linear_checked(&self.index);
                return Some(self.slot);
            }
            State::Running => {}
        }
        let dims = self.plan.inner_dims();
        for k in (0..self.index.len()).rev() {
            let size = dims[k];
            if self.index[k] + 1 < size {
                self.index[k] += 1;
                self.changed = k;
                match &mut self.fast {
                    Some(fast) => {
                        // Add 1 to the digits of dimension k, carrying upwards.
                        for ((stride, modulus), value) in
                            fast.digits[k].iter().zip(fast.values[k].iter_mut())
                        {
                            *value += 1;
                            self.slot += stride;
                            match modulus {
                                Some(m) if *value == *m => {
                                    *value = 0;
                                    self.slot -= m * stride;
                                }
                                _ => break,
                            }
                        }
                    }
                    None => self.slot = self.plan.linear_checked(&self.index),
                }
                return Some(self.slot);
            }
            self.index[k] = 0;
            if let Some(fast) = &mut self.fast {
                for ((stride, _), value) in fast.digits[k].iter().zip(fast.values[k].iter_mut()) {
                    self.slot -= *value * stride;
                    *value = 0;
                }
            }
        }
        // Every coordinate went back to 0.
        self.changed = 0;
        self.state = State::Done;
        None
    }
}

/// The run-finding state behind [`PhysicalOrder`].
#[derive(Clone, Debug)]
struct Walker<'a> {
    plan: &'a LayoutPlan,
    state: State,
    /// The index at the start of the current run (the inner coordinate is brought up
    /// to date by [`index`](Self::index)).
    index: Vec<u64>,
    /// The last element of the current run (the current one is `remaining` before it).
    slot: u64,
    logical: u64,
    /// Row-major weight of each logical dimension (for the logical position).
    row_major: Vec<u64>,
    /// Elements left in the current run after the current one (stepping runs).
    remaining: u64,
    /// Logical position step along the run.
    step_logical: u64,
    /// The run's first slot, its logical dimension, divisor and starting coordinate.
    run_slot: u64,
    inner_dim: usize,
    inner_div: u64,
    inner_base: u64,
    /// Incremental state for digit plans.
    fast: Option<PhysicalFast<'a>>,
    /// Staged plans whose block search ran out of budget: a window of the next
    /// elements' (slot, logical position) sorted by slot, the next one to yield, and
    /// whether the window reaches the last element (see [`WINDOW`]).
    sorted: Option<Window>,
    /// Elements a window holds at most ([`WINDOW`]; smaller in tests).
    window_cap: usize,
    /// Windows made so far: the first holds [`FIRST_WINDOW`] elements, and each next
    /// one twice as many as the one before, up to `window_cap`.
    windows: u32,
    /// Steps the block search may still take on a staged plan before it gives way to
    /// sorted windows.
    budget: u64,
    /// A panic caught in [`PhysicalOrder::next_run`], to re-raise in the caller.
    panic: Caught,
}

/// A caught panic's payload (a clone holds none).
#[derive(Default)]
struct Caught(Option<Box<dyn Any + Send>>);

impl Clone for Caught {
    fn clone(&self) -> Self {
        Caught(None)
    }
}

impl fmt::Debug for Caught {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Caught(..)"
        } else {
            "Caught"
        })
    }
}

#[derive(Clone, Debug)]
struct PhysicalFast<'a> {
    digits: &'a Digits,
    counters: Vec<u64>,
    /// Largest value + 1 of each source.
    ranges: Vec<u64>,
    /// Source values at the start of the run.
    values: Vec<u64>,
    /// A checked run (the inner axis reads a combined source): its next and end
    /// positions along the inner axis, its source and divisor.
    checked: Option<CheckedRun>,
}

/// The search of one [`Window`]: boxes of logical indices ruled out or halved.
struct Boxes<'p> {
    staged: &'p super::compile::Staged,
    row_major: &'p [u64],
    from: u64,
    cap: usize,
    /// Slots at or past `bound` are known to lie beyond the `cap` smallest.
    bound: u64,
    elements: Vec<(u64, u64)>,
    complete: bool,
}

impl Boxes<'_> {
    /// One element: kept if it is at or after `from` and among the `cap` smallest.
    fn offer(&mut self, slot: u64, logical: u64) {
        if slot < self.from || slot >= self.bound {
            return;
        }
        self.elements.push((slot, logical));
        if self.elements.len() == 2 * self.cap {
            self.elements.select_nth_unstable(self.cap);
            self.bound = self.elements[self.cap].0;
            self.elements.truncate(self.cap);
            self.complete = false;
        }
    }

    /// The box `lo ..= hi`, whose slots lie in `bounds`.
    fn visit(&mut self, lo: &mut [u64], hi: &mut [u64], bounds: (u64, u64)) {
        if bounds.1 < self.from || bounds.0 >= self.bound {
            return;
        }
        let Some((k, halves)) = self.staged.halve(lo, hi) else {
            // One element: its bounds are its slot.
            let logical = lo.iter().zip(self.row_major).map(|(e, w)| e * w).sum();
            self.offer(bounds.0, logical);
            return;
        };
        // The half with the lower slot bound first.
        let [(_, first), (_, second)] = halves;
        let order = if second.0 < first.0 { [1, 0] } else { [0, 1] };
        let saved = (lo[k], hi[k]);
        for i in order {
            let ((a, b), bounds) = halves[i];
            (lo[k], hi[k]) = (a, b);
            self.visit(lo, hi, bounds);
        }
        (lo[k], hi[k]) = saved;
    }
}

/// The next elements of a staged plan in memory order, found by sorting.
#[derive(Clone, Debug)]
struct Window {
    /// (slot, logical position), sorted by slot.
    elements: Vec<(u64, u64)>,
    /// The next one to yield.
    next: usize,
    /// Whether no element lies past the window's last.
    complete: bool,
}

#[derive(Clone, Copy, Debug)]
struct CheckedRun {
    next: u64,
    end: u64,
    source: usize,
    div: u64,
}

impl<'a> Walker<'a> {
    fn new(plan: &'a LayoutPlan) -> Self {
        let dims = plan.inner_dims();
        let mut row_major = vec![0; dims.len()];
        let mut w: u64 = 1;
        for (r, &d) in row_major.iter_mut().zip(dims).rev() {
            *r = w;
            w = w.saturating_mul(d);
        }
        let fast = plan
            .digits()
            .filter(|d| !d.axes.is_empty())
            .map(|digits| PhysicalFast {
                digits,
                counters: vec![0; digits.axes.len()],
                ranges: (0..digits.sources.len())
                    .map(|s| digits.sources.range(s, dims))
                    .collect(),
                values: vec![0; digits.sources.len()],
                checked: None,
            });
        Walker {
            plan,
            state: State::Start,
            index: vec![0; dims.len()],
            slot: 0,
            logical: 0,
            row_major,
            remaining: 0,
            step_logical: 0,
            run_slot: 0,
            inner_dim: usize::MAX,
            inner_div: 0,
            inner_base: 0,
            fast,
            sorted: None,
            window_cap: WINDOW,
            windows: 0,
            budget: SEARCH_BUDGET,
            panic: Caught::default(),
        }
    }

    /// The index of the element `remaining` steps before the end of the run.
    fn index_at(&mut self, remaining: u64) -> &[u64] {
        if let Some(e) = self.index.get_mut(self.inner_dim) {
            let slot = self.slot - remaining;
            *e = self.inner_base + (slot - self.run_slot) * self.inner_div;
        }
        &self.index
    }

    fn logical_of_index(&self) -> u64 {
        self.index
            .iter()
            .zip(&self.row_major)
            .map(|(e, w)| e * w)
            .sum()
    }

    /// Sets up the run of the innermost axis at the current outer counters. Returns its
    /// first element for a stepping run; `None` for a run without elements or a checked
    /// run (which `next_slow` walks). After a stepping run starts, `slot` and `logical`
    /// hold its *last* element.
    fn start_run(&mut self) -> Option<(u64, u64)> {
        let fast = self.fast.as_mut()?;
        let dims = self.plan.inner_dims();
        let axes = &fast.digits.axes;
        fast.values.iter_mut().for_each(|v| *v = 0);
        let mut slot = 0;
        for (axis, &c) in axes.iter().zip(&fast.counters) {
            slot += c * axis.stride;
            if let AxisKind::Digit { source, div, .. } = axis.kind {
                fast.values[source] += c * div;
            }
        }
        self.run_slot = slot;
        self.remaining = 0;
        self.inner_dim = usize::MAX; // no coordinate moves along the run
        self.inner_div = 0;
        self.step_logical = 0;
        fast.checked = None;
        let inner = axes.last()?;
        let inner_source = match inner.kind {
            AxisKind::Digit { source, .. } => Some(source),
            AxisKind::Const => None,
        };
        // Every other source must hold an element for the whole run.
        for (s, &v) in fast.values.iter().enumerate() {
            if Some(s) != inner_source
                && !fast.digits.sources.decompose(s, v, dims, &mut self.index)
            {
                return None;
            }
        }
        let AxisKind::Digit {
            source,
            div,
            modulus,
        } = inner.kind
        else {
            self.slot = slot;
            self.logical = self.logical_of_index();
            return Some((slot, self.logical));
        };
        let start = fast.values[source];
        let mut n = inner.radix;
        if let Some(m) = modulus {
            n = n.min(m);
        }
        n = n.min(fast.ranges[source].saturating_sub(start).div_ceil(div));
        let Some(k) = fast.digits.sources.plain_dim(source) else {
            fast.checked = Some(CheckedRun {
                next: 0,
                end: n,
                source,
                div,
            });
            return None;
        };
        if n == 0
            || !fast
                .digits
                .sources
                .decompose(source, start, dims, &mut self.index)
        {
            return None;
        }
        let logical = self.logical_of_index();
        self.remaining = n - 1;
        self.inner_dim = k;
        self.inner_div = div;
        self.inner_base = start;
        self.step_logical = div * self.row_major[k];
        // Last element of the run (the inner axis has stride 1).
        self.slot = slot + self.remaining;
        self.logical = logical + self.remaining * self.step_logical;
        Some((slot, logical))
    }

    /// The next element of a checked run, if any, spending a step of the budget on
    /// each slot of padding it passes.
    fn step_checked(&mut self) -> Result<Option<(u64, u64)>, Exhausted> {
        let Some(fast) = self.fast.as_mut() else {
            return Ok(None);
        };
        let dims = self.plan.inner_dims();
        while let Some(run) = fast.checked.as_mut() {
            if run.next >= run.end {
                fast.checked = None;
                break;
            }
            let c = run.next;
            run.next += 1;
            let value = fast.values[run.source] + c * run.div;
            if fast
                .digits
                .sources
                .decompose(run.source, value, dims, &mut self.index)
            {
                self.slot = self.run_slot + c;
                self.logical = self.logical_of_index();
                return Ok(Some((self.slot, self.logical)));
            }
            spend(&mut self.budget)?;
        }
        Ok(None)
    }

    /// Moves the outer counters to the next configuration that may hold elements.
    fn advance_outer(&mut self) -> bool {
        let Some(fast) = &mut self.fast else {
            return false;
        };
        let axes = &fast.digits.axes;
        let inner = axes.len() - 1;
        if let Some(c) = fast.counters.get_mut(inner) {
            *c = 0;
        }
        let mut a = inner;
        while a > 0 {
            a -= 1;
            fast.counters[a] += 1;
            let c = fast.counters[a];
            let axis = &axes[a];
            let valid = c < axis.radix
                && match axis.kind {
                    AxisKind::Const => false,
                    AxisKind::Digit {
                        source, modulus, ..
                    } => {
                        modulus.is_none_or(|m| c < m) && {
                            // The source's value from this axis and the ones above it,
                            // the ones below at 0: no element beyond its range.
                            let v: u64 = axes[..=a]
                                .iter()
                                .zip(&fast.counters)
                                .filter_map(|(x, &cx)| match x.kind {
                                    AxisKind::Digit {
                                        source: s, div: dx, ..
                                    } if s == source => Some(cx * dx),
                                    _ => None,
                                })
                                .sum();
                            v < fast.ranges[source]
                        }
                    }
                };
            if valid {
                return true;
            }
            // This value and every larger one hold no element: carry.
            fast.counters[a] = 0;
        }
        false
    }

    #[inline(never)]
    fn next_slow(&mut self) -> Option<(u64, u64)> {
        if self.state == State::Done {
            return None;
        }
        let first_call = self.state == State::Start;
        if first_call {
            self.state = State::Running;
            if self.plan.element_count() == 0 {
                self.state = State::Done;
                return None;
            }
            if self.fast.is_none() {
                if self.plan.digits().is_some_and(|d| d.axes.is_empty()) {
                    // A single element, at slot 0.
                    self.state = State::Done;
                    return Some((0, 0));
                }
                return self.scan_from(0);
            }
            if let Some(first) = self.start_run() {
                return Some(first);
            }
        } else if self.sorted.is_some() {
            return self.next_sorted();
        } else if self.fast.is_none() {
            let from = self.slot + 1;
            return self.scan_from(from);
        }
        // The first slot not yet yielded: every element of the last run was taken
        // before this call, and `slot` holds its last one.
        let from = if first_call { 0 } else { self.slot + 1 };
        match self.walk_runs() {
            Ok(Some(item)) => {
                self.budget = (self.budget + REFILL).min(SEARCH_BUDGET);
                Some(item)
            }
            Ok(None) => {
                self.state = State::Done;
                None
            }
            Err(Exhausted) => self.give_way(from),
        }
    }

    /// The digit plan's odometer: the next element of the checked run, or the first of
    /// the next run that holds one. Each run or slot passed without an element spends
    /// a step of the budget.
    fn walk_runs(&mut self) -> Result<Option<(u64, u64)>, Exhausted> {
        loop {
            if let Some(item) = self.step_checked()? {
                return Ok(Some(item));
            }
            if !self.advance_outer() {
                return Ok(None);
            }
            if let Some(first) = self.start_run() {
                return Ok(Some(first));
            }
            spend(&mut self.budget)?;
        }
    }

    /// Leaves the digit walk, whose budget is spent, for sorted windows from `from` on.
    ///
    /// A digit plan whose sources combine dimensions (`*` tiles, tiles that prepend
    /// dimensions) walks its checked runs slot by slot, and its outer counters over
    /// configurations that may hold no element: where padding outnumbers the elements
    /// by millions (42 elements in 71 million slots, found by fuzzing), that is
    /// seconds before the first element. The windows skip padding by whole boxes.
    fn give_way(&mut self, from: u64) -> Option<(u64, u64)> {
        self.fast = None;
        self.remaining = 0;
        self.inner_dim = usize::MAX;
        self.step_logical = 0;
        self.sorted = Some(self.next_window(from));
        self.next_sorted()
    }

    /// The (at most) `cap` elements with the smallest slots at or after `from`, sorted
    /// by slot, keeping the smallest candidates (at most `2 · cap` of them in memory at
    /// a time). The logical indices are visited as boxes, halved until single
    /// elements, the half with the lower slot bound first
    /// ([`Staged::slot_bounds`](super::compile::Staged::slot_bounds)): a box whose
    /// slots all lie before `from` or past the smallest `cap` found so far is skipped
    /// whole, so that a small window costs much less than a walk of every element.
    fn window(&self, from: u64, cap: usize) -> Window {
        let dims = self.plan.inner_dims();
        let mut boxes = Boxes {
            staged: self.plan.staged(),
            row_major: &self.row_major,
            from,
            cap: cap.max(1),
            bound: u64::MAX,
            elements: Vec::new(),
            complete: true,
        };
        if (boxes.cap as u64).saturating_mul(4) >= self.plan.element_count() {
            // A window of a good part of the plan rules out few boxes: every element
            // in logical order is cheaper.
            for (slot, logical) in self.plan.logical_order().zip(0u64..) {
                boxes.offer(slot, logical);
            }
        } else {
            let mut lo = vec![0; dims.len()];
            let mut hi: Vec<u64> = dims.iter().map(|&d| d.saturating_sub(1)).collect();
            let bounds = boxes.staged.slot_bounds(&lo, &hi);
            boxes.visit(&mut lo, &mut hi, bounds);
        }
        let Boxes {
            mut elements,
            mut complete,
            cap,
            ..
        } = boxes;
        if elements.len() > cap {
            elements.select_nth_unstable(cap);
            elements.truncate(cap);
            complete = false;
        }
        elements.sort_unstable();
        Window {
            elements,
            next: 0,
            complete,
        }
    }

    /// The next window, at or after `from`.
    fn next_window(&mut self, from: u64) -> Window {
        let cap = FIRST_WINDOW
            .checked_shl(self.windows)
            .unwrap_or(usize::MAX)
            .min(self.window_cap);
        self.windows = self.windows.saturating_add(1);
        self.window(from, cap)
    }

    /// The next element of a sorted window, its index rebuilt from its logical
    /// position; the next window once this one is used up.
    fn next_sorted(&mut self) -> Option<(u64, u64)> {
        let window = self.sorted.as_ref()?;
        if window.next == window.elements.len() && !window.complete {
            let from = window.elements.last().map_or(0, |&(slot, _)| slot + 1);
            self.sorted = Some(self.next_window(from));
        }
        let window = self.sorted.as_mut()?;
        let Some(&(slot, logical)) = window.elements.get(window.next) else {
            self.state = State::Done;
            return None;
        };
        window.next += 1;
        let mut rest = logical;
        for (e, &w) in self.index.iter_mut().zip(&self.row_major) {
            *e = rest / w.max(1);
            rest %= w.max(1);
        }
        self.slot = slot;
        self.logical = logical;
        Some((slot, logical))
    }

    /// The general path: the first slot at or after `from` that holds an element,
    /// found by the staged description, which skips padding by whole blocks.
    ///
    /// The search has a budget of [`SEARCH_BUDGET`] steps, and [`REFILL`] more for
    /// each element it finds; once it is spent, the order goes on from sorted windows
    /// of [`WINDOW`] elements.
    fn scan_from(&mut self, from: u64) -> Option<(u64, u64)> {
        let staged = self.plan.staged();
        let found = match staged.next_element_within(from, &mut self.index, &mut self.budget) {
            Ok(found) => {
                // As many steps again for each element found, at their cost.
                let refill = REFILL.saturating_mul(staged.step_cost);
                self.budget = self.budget.saturating_add(refill).min(SEARCH_BUDGET);
                found
            }
            Err(Exhausted) => {
                self.sorted = Some(self.next_window(from));
                return self.next_sorted();
            }
        };
        match found {
            Some(slot) => {
                self.slot = slot;
                self.logical = self.logical_of_index();
                Some((slot, self.logical))
            }
            None => {
                self.state = State::Done;
                None
            }
        }
    }
}

/// Elements a sorted window of a staged plan holds (tile stages that do not compose into
/// digits). The block search that finds a staged plan's next element skips padding by
/// whole blocks, but its test of a block is approximate, and on deep plans of tiles
/// that do not nest it can spend seconds on one element. After [`SEARCH_BUDGET`] steps
/// the walk gives way to windows: the logical order walked once (about 100 ns an
/// element on deep plans), keeping the `WINDOW` smallest slots at or after the last one
/// yielded, then sorted. A plan of up to `WINDOW` elements is sorted once; a larger one
/// costs one walk per `WINDOW` elements yielded, in at most `2 · WINDOW` pairs of
/// memory (8 MiB).
const WINDOW: usize = 1 << 18;

/// Elements of the first sorted window of a staged plan (see [`WINDOW`]).
const FIRST_WINDOW: usize = 64;

/// Steps (slots tried, blocks tested) the block search may take on a staged plan
/// before it gives way to sorted windows: at most this many at a time (about 1 µs a
/// step on deep plans), and [`REFILL`] more for each element found, so that a search
/// that finds its elements in a few steps each (most staged plans) goes on for ever.
/// A step of a plan whose stages hold many sizes counts as several
/// ([`Staged::step_cost`](super::compile::Staged::step_cost)), so that the budget bounds the
/// time a search takes, not only its steps.
const SEARCH_BUDGET: u64 = 1 << 14;

/// Steps added to the block search's budget for each element it finds.
const REFILL: u64 = 256;

/// Every element in memory order; see [`LayoutPlan::physical_order`].
///
/// Yields `(linear index, logical position)`; [`index`](Self::index) gives the
/// multi-dimensional index of the element last returned.
///
/// On digit plans it walks the grid axes as an odometer, skipping whole runs of padding
/// at once, and steps along the innermost axis by addition. Plans that run the tile
/// stages one by one (see [`LayoutPlan::is_digit_plan`]) search for each next element
/// block by block. Either walk has a budget of steps that yield no element; once it
/// is spent (padding that outnumbers the elements many times over), the order goes on
/// from sorted windows of the next elements, so that the first elements come at once
/// whatever the layout.
#[derive(Clone, Debug)]
pub struct PhysicalOrder<'a> {
    // The current run of elements at consecutive slots, in plain fields: the last
    // element's slot and logical position, how many come before it, and the logical
    // step between neighbours. Only the boxed walker's address reaches the (cold) call
    // that starts a new run, so a caller's loop over `next()` keeps these in registers.
    slot: u64,
    logical: u64,
    remaining: u64,
    step: u64,
    walker: Box<Walker<'a>>,
    /// The whole index, when the plan leaves dimensions out.
    whole: Option<Vec<u64>>,
}

impl<'a> PhysicalOrder<'a> {
    pub(super) fn new(plan: &'a LayoutPlan) -> Self {
        PhysicalOrder {
            slot: 0,
            logical: 0,
            remaining: 0,
            step: 0,
            walker: Box::new(Walker::new(plan)),
            whole: plan.squeeze().map(|_| vec![0; plan.rank()]),
        }
    }

    /// The multi-dimensional index of the element last returned.
    pub fn index(&mut self) -> &[u64] {
        let plan = self.walker.plan;
        let inner = self.walker.index_at(self.remaining);
        match (&mut self.whole, plan.squeeze()) {
            (Some(whole), Some(s)) => {
                s.scatter(inner, whole);
                whole
            }
            _ => inner,
        }
    }

    /// Starts the next run, leaving in the walker its last element, the count after
    /// its first one and the logical step; returns [`RUN`], [`END`] or [`PANICKED`].
    ///
    /// Two things let a caller's loop over `next()` keep its own state (say an `f32`
    /// sum) in registers, the call being the only one in that loop: the function takes
    /// the walker alone, so the run fields of [`PhysicalOrder`] never have their address
    /// taken; and it cannot unwind (C ABI), so the call has no cleanup edge. With one,
    /// LLVM's register allocator was seen to keep the caller's sum in memory, a store
    /// and a load per element (3.3 ns instead of 0.7 ns per element). A panic inside is
    /// caught here and raised again by the caller's `next()` (see [`Self::rethrow`]).
    #[cold]
    #[inline(never)]
    extern "C" fn next_run(walker: &mut Walker<'_>) -> u8 {
        let found = panic::catch_unwind(AssertUnwindSafe(|| {
            walker.remaining = 0;
            // Every path of `next_slow` returns the run's first element, `remaining`
            // before the last one, so the caller rebuilds it from the run's fields.
            walker.next_slow().is_some()
        }));
        match found {
            Ok(true) => RUN,
            Ok(false) => END,
            Err(payload) => {
                walker.state = State::Done;
                walker.remaining = 0;
                walker.panic = Caught(Some(payload));
                PANICKED
            }
        }
    }

    /// Raises again the panic that [`Self::next_run`] caught.
    #[cold]
    #[inline(never)]
    fn rethrow(walker: &mut Walker<'_>) -> ! {
        let payload = walker
            .panic
            .0
            .take()
            .unwrap_or_else(|| Box::new("physical order: panic payload lost"));
        panic::resume_unwind(payload)
    }

    /// Loads a new run into the plain fields, with the first element not yet taken.
    #[inline(always)]
    fn refill(&mut self) -> bool {
        match Self::next_run(&mut self.walker) {
            RUN => {}
            END => return false,
            _ => Self::rethrow(&mut self.walker),
        }
        let walker = &*self.walker;
        self.slot = walker.slot;
        self.logical = walker.logical;
        self.remaining = walker.remaining + 1;
        self.step = walker.step_logical;
        true
    }
}

/// [`PhysicalOrder::next_run`] started a run.
const RUN: u8 = 0;
/// [`PhysicalOrder::next_run`] found no more elements.
const END: u8 = 1;
/// [`PhysicalOrder::next_run`] caught a panic.
const PANICKED: u8 = 2;

impl Iterator for PhysicalOrder<'_> {
    type Item = (u64, u64);

    #[inline(always)]
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.remaining == 0 && !self.refill() {
            return None;
        }
        // Only `remaining` changes along a run: slot and logical position are counted
        // back from the run's last element.
        self.remaining -= 1;
        Some((
            self.slot - self.remaining,
            self.logical - self.remaining * self.step,
        ))
    }

    #[inline]
    fn fold<B, F>(mut self, init: B, mut f: F) -> B
    where
        F: FnMut(B, (u64, u64)) -> B,
    {
        let mut acc = init;
        loop {
            // The rest of the current run, in a tight loop.
            let (slot, logical, step) = (self.slot, self.logical, self.step);
            for r in (0..self.remaining).rev() {
                acc = f(acc, (slot - r, logical - r * step));
            }
            self.remaining = 0;
            if !self.refill() {
                return acc;
            }
        }
    }
}

#[cfg(test)]
mod sorted_tests {
    use super::Walker;
    use crate::index::LayoutPlan;
    use crate::validate::{validate_shape_with, Options};

    fn plan(text: &str) -> LayoutPlan {
        let proto = crate::text::parse_shape(text).unwrap();
        let shape = validate_shape_with(&proto, Options::hlo_text())
            .into_result()
            .unwrap();
        LayoutPlan::new(shape.as_array().unwrap()).unwrap()
    }

    /// Small staged plans are put in order by sorting; the block search that larger
    /// ones use must give the same elements in the same order.
    #[test]
    fn walks_and_sorting_agree() {
        let (mut staged, mut checked) = (0, 0);
        for text in [
            "f32[64,1]{1,0:T(1,1000)(3)}",
            "f32[1]{0:T(1000)(3)}",
            "f32[3,5,2]{0,2,1:T(100,7)(3,5)(2)}",
            "f32[5,7]{1,0:T(3,4)(2)}",
            "bf16[6,2,6,10]{3,2,1,0:T(2,*,*)(1,*,*,2,1,3)}",
            "s4[9,13]{0,1:T(4,3)(2)E(4)}",
            // Digit plans whose sources combine dimensions: checked runs.
            "f32[5,3]{1,0:T(*,2)}",
            "f32[6,5,3]{2,1,0:T(*,4)(2)}",
            "s4[9,13]{0,1:T(*,4)(2)E(4)}",
            "f32[7,6]{1,0:T(*,1,11,*,*,*,11,*,*,*)(1,*,*,*,*,1)(21,11,*,*,*,61,*,*,*)(1,*,*,*,*,*,*,*)(1,*)}",
        ] {
            let plan = plan(text);
            let mut walker = Walker::new(&plan);
            let mut searched = Vec::new();
            let mut from = 0;
            while let Some((slot, logical)) = walker.scan_from(from) {
                searched.push((slot, logical));
                from = slot + 1;
            }
            assert_eq!(searched.len() as u64, plan.element_count(), "{text}");
            assert_eq!(searched, walker.window(0, 1 << 20).elements, "{text}");
            let walked: Vec<(u64, u64)> = plan.physical_order().collect();
            assert_eq!(walked, searched, "{text}");
            // On a staged plan, a search whose budget runs out part way goes on by
            // sorting: the same elements, in the same order, none twice.
            // On a digit plan with checked runs, a walk whose budget runs out goes on
            // the same way.
            for budget in [0, 1, 5, 40, 300] {
                let mut walker = Walker::new(&plan);
                match plan.digits() {
                    None => staged += 1,
                    Some(d) if !d.trivial => checked += 1,
                    Some(_) => break,
                }
                walker.budget = budget;
                let walked: Vec<(u64, u64)> = std::iter::from_fn(|| walker.next_slow()).collect();
                assert_eq!(walked, searched, "{text} with a budget of {budget}");
                // Windows smaller than the plan: one walk per window, the same order.
                for cap in [1, 2, 7] {
                    let mut walker = Walker::new(&plan);
                    walker.budget = budget;
                    walker.window_cap = cap;
                    let walked: Vec<(u64, u64)> =
                        std::iter::from_fn(|| walker.next_slow()).collect();
                    assert_eq!(
                        walked, searched,
                        "{text}, budget {budget}, windows of {cap}"
                    );
                }
            }
        }
        // The fuzzer's 42 elements in 71 million slots: the digit walk gives way to
        // windows before it reaches the second element, instead of walking ~1.7
        // million slots of padding to each.
        let plan = plan("f32[7,6]{1,0:T(*,1,11,*,*,*,11,*,*,*)(1,*,*,*,*,1)(21,11,*,*,*,61,*,*,*)(1,*,*,*,*,*,*,*)(1,*)}");
        let mut walker = Walker::new(&plan);
        assert!(walker.fast.is_some());
        assert_eq!(walker.next_slow(), Some((0, 0)));
        assert_eq!(walker.next_slow(), Some((1_705_011, 1)));
        assert!(walker.fast.is_none() && walker.sorted.is_some());
        assert!(staged >= 10, "only {staged} staged runs");
        assert!(
            checked >= 10,
            "only {checked} runs of digit plans with checked runs"
        );
    }
}
