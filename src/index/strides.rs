//! From strides back to a layout: which `minor_to_major` (and legacy padding) a
//! numpy/DLPack-style stride vector means, or why none does.

use std::fmt;

/// The layout a stride vector describes: a `minor_to_major` order, and the legacy
/// `padded_dimensions` when the strides leave gaps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedLayout {
    /// Dimension numbers from most minor to most major.
    pub minor_to_major: Vec<usize>,
    /// Padded size of each logical dimension, when some dimension is padded: the
    /// layout then needs XLA's retired `padded_dimensions` (2017–2018), which today's
    /// XLA cannot express. `None` when the strides are dense.
    pub padded_dimensions: Option<Vec<u64>>,
}

/// Why no `minor_to_major` (with or without padding) gives a stride vector.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrideError {
    /// The stride vector's length differs from the number of dimensions.
    WrongRank {
        /// Strides given.
        got: usize,
        /// Dimensions of the shape.
        rank: usize,
    },
    /// A byte stride is not a multiple of the element size.
    NotWholeElements {
        /// The logical dimension.
        dim: usize,
        /// Its byte stride.
        stride: i64,
        /// The element size in bytes.
        element_bytes: u64,
    },
    /// A stride of 0 on a dimension of size > 1: a broadcast view, which repeats
    /// elements; a layout gives every element its own slot.
    Broadcast {
        /// The logical dimension.
        dim: usize,
    },
    /// A negative stride (a reversed view): XLA layouts only go forwards.
    Negative {
        /// The logical dimension.
        dim: usize,
        /// Its stride.
        stride: i64,
    },
    /// The most minor dimension (of size > 1) must have stride 1: XLA pads only at the
    /// end of dimensions, so it cannot leave gaps between neighbouring elements.
    MinorNotContiguous {
        /// The logical dimension.
        dim: usize,
        /// Its stride.
        stride: i64,
    },
    /// A stride is not a multiple of the next more minor dimension's stride, or leaves
    /// that dimension less room than its size (overlapping or interleaved dimensions).
    NotNested {
        /// The logical dimension.
        dim: usize,
        /// Its stride.
        stride: i64,
        /// The next more minor dimension.
        minor_dim: usize,
        /// Its stride.
        minor_stride: i64,
        /// Its size.
        minor_size: u64,
    },
}

impl fmt::Display for StrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrideError::WrongRank { got, rank } => {
                write!(f, "{got} strides given, but the shape has {rank} dimensions")
            }
            StrideError::NotWholeElements {
                dim,
                stride,
                element_bytes,
            } => write!(
                f,
                "stride {stride} of dimension {dim} is not a multiple of the element size ({element_bytes} bytes)"
            ),
            StrideError::Broadcast { dim } => write!(
                f,
                "stride 0 of dimension {dim} repeats elements (a broadcast): no layout does that"
            ),
            StrideError::Negative { dim, stride } => write!(
                f,
                "stride {stride} of dimension {dim} is negative: no layout goes backwards"
            ),
            StrideError::MinorNotContiguous { dim, stride } => write!(
                f,
                "dimension {dim} is the most minor but has stride {stride}, not 1: layouts pad only at the end of a dimension"
            ),
            StrideError::NotNested {
                dim,
                stride,
                minor_dim,
                minor_stride,
                minor_size,
            } => write!(
                f,
                "stride {stride} of dimension {dim} is not a multiple of stride {minor_stride} of dimension {minor_dim} (size {minor_size}) at least {minor_size} times over"
            ),
        }
    }
}

impl std::error::Error for StrideError {}

/// The layout that element strides (DLPack's convention) describe for an array of the
/// given dimension sizes.
///
/// Dimensions of size 1 carry no stride information (numpy and DLPack allow any
/// value there) and are ordered among equal strides before the larger dimensions;
/// among equal strides, higher dimension numbers are more minor. The most major
/// dimension is never padded: nothing in the strides says how far it extends.
///
/// ```
/// # use xla_shape::index::layout_for_strides;
/// // numpy's C order for a (2, 3) array: minor_to_major {1,0}, no padding.
/// let l = layout_for_strides(&[2, 3], &[3, 1]).unwrap();
/// assert_eq!(l.minor_to_major, [1, 0]);
/// assert_eq!(l.padded_dimensions, None);
/// // The seeds' example: [2 x 3] with minor_to_major {0,1} padded to [3,5].
/// let l = layout_for_strides(&[2, 3], &[1, 3]).unwrap();
/// assert_eq!(l.minor_to_major, [0, 1]);
/// assert_eq!(l.padded_dimensions, Some(vec![3, 3]));
/// ```
///
/// # Errors
/// A [`StrideError`] saying why no layout fits.
pub fn layout_for_strides(dims: &[u64], strides: &[i64]) -> Result<StridedLayout, StrideError> {
    if strides.len() != dims.len() {
        return Err(StrideError::WrongRank {
            got: strides.len(),
            rank: dims.len(),
        });
    }
    // Size-1 dimensions first among equal strides, then higher numbers first.
    let mut order: Vec<usize> = (0..dims.len()).collect();
    for (dim, &stride) in strides.iter().enumerate() {
        if stride < 0 && dims[dim] > 1 {
            return Err(StrideError::Negative { dim, stride });
        }
        if stride == 0 && dims[dim] > 1 {
            return Err(StrideError::Broadcast { dim });
        }
    }
    let key = |k: usize| if dims[k] <= 1 { None } else { Some(strides[k]) };
    // Size-≤1 dimensions carry no information: order the others by stride, then put
    // each size-≤1 dimension just before the first dimension with a larger stride.
    order.sort_by(|&a, &b| {
        let sa = strides[a].max(0);
        let sb = strides[b].max(0);
        sa.cmp(&sb)
            .then_with(|| (dims[b] <= 1).cmp(&(dims[a] <= 1)))
            .then_with(|| b.cmp(&a))
    });
    let mut padded = dims.to_vec();
    let mut previous: Option<usize> = None;
    for &k in &order {
        let Some(stride) = key(k) else { continue };
        match previous {
            None => {
                if stride != 1 {
                    return Err(StrideError::MinorNotContiguous { dim: k, stride });
                }
            }
            Some(p) => {
                let ps = strides[p];
                let room = stride / ps;
                if stride % ps != 0 || (room as u64) < dims[p] {
                    return Err(StrideError::NotNested {
                        dim: k,
                        stride,
                        minor_dim: p,
                        minor_stride: ps,
                        minor_size: dims[p],
                    });
                }
                padded[p] = room as u64;
            }
        }
        previous = Some(k);
    }
    let padded_dimensions = (padded != dims).then_some(padded);
    Ok(StridedLayout {
        minor_to_major: order,
        padded_dimensions,
    })
}

/// As [`layout_for_strides`], for byte strides (numpy's convention) of elements of
/// `element_bytes` bytes each.
///
/// # Errors
/// [`StrideError::NotWholeElements`] for a stride that is not a multiple of the
/// element size, and every error of [`layout_for_strides`].
pub fn layout_for_byte_strides(
    dims: &[u64],
    byte_strides: &[i64],
    element_bytes: u64,
) -> Result<StridedLayout, StrideError> {
    let size = i64::try_from(element_bytes.max(1)).unwrap_or(i64::MAX);
    let mut strides = Vec::with_capacity(byte_strides.len());
    for (dim, &stride) in byte_strides.iter().enumerate() {
        if stride % size != 0 && dims.get(dim).is_some_and(|&d| d > 1) {
            return Err(StrideError::NotWholeElements {
                dim,
                stride,
                element_bytes,
            });
        }
        strides.push(stride / size);
    }
    layout_for_strides(dims, &strides)
}
