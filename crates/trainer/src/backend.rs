//! Where tensors live: the [`Device`] a caller names, the backend types behind it (the only
//! place that spells them), the macro that hides the backend type parameter, and the few
//! helpers every floor above needs to move data between host and device.

use burn::backend::{Autodiff, Flex};
use burn::tensor::backend::{AutodiffBackend, Backend};

use crate::error::TrainerError;

/// Where tensors live. Parsed from `cpu`, `libtorch`, `cuda` or `cuda:N`, and written the same
/// way in configuration files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// burn's `flex` CPU backend.
    #[default]
    Cpu,
    /// burn's CUDA backend on GPU `N` (needs the `cuda` feature).
    Cuda(usize),
    /// The CPU through burn's LibTorch backend (`burn-tch`; needs the `tch` feature and a
    /// PyTorch install at build and run time: docs/libtorch.md).
    LibTorch,
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
            Device::LibTorch => f.write_str("libtorch"),
        }
    }
}

impl std::str::FromStr for Device {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || TrainerError::Device {
            device: s.to_string(),
            reason: "expected cpu, libtorch, cuda or cuda:N".into(),
        };
        match s.trim() {
            "cpu" => Ok(Device::Cpu),
            "libtorch" => Ok(Device::LibTorch),
            "cuda" => Ok(Device::Cuda(0)),
            t => t
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Device::Cuda)
                .ok_or_else(bad),
        }
    }
}

impl Device {
    /// Whether this build can use the device (`cuda` needs the `cuda` feature, `libtorch` the
    /// `tch` feature).
    pub fn is_available(self) -> bool {
        match self {
            Device::Cpu => true,
            Device::Cuda(_) => cfg!(feature = "cuda"),
            Device::LibTorch => cfg!(feature = "tch"),
        }
    }
}

pub(crate) type CpuB = Autodiff<Flex>;
#[cfg(feature = "cuda")]
pub(crate) type CudaB = Autodiff<burn::backend::Cuda>;

#[cfg(feature = "cuda")]
pub(crate) fn cuda_device(i: usize) -> burn::backend::cuda::CudaDevice {
    burn::backend::cuda::CudaDevice::new(i)
}

#[cfg(feature = "tch")]
pub(crate) type TchB = Autodiff<burn::backend::LibTorch<f32>>;

/// The error for a device this build has no backend for.
#[cfg(any(not(feature = "cuda"), not(feature = "tch")))]
pub(crate) fn unavailable(device: Device) -> TrainerError {
    let reason = match device {
        Device::LibTorch => {
            "this build has no LibTorch backend: rebuild with `--features tch` against a \
             PyTorch install (docs/libtorch.md)"
        }
        _ => "this build has no CUDA backend: rebuild with `--features cuda`",
    };
    TrainerError::Device {
        device: device.to_string(),
        reason: reason.into(),
    }
}

impl serde::Serialize for Device {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Device {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Run `$body` with `$x` bound to the backend-specific value inside `$e`.
macro_rules! dispatch {
    ($e:expr, $ty:ident, $x:ident => $body:expr) => {
        match $e {
            $ty::Cpu($x) => $body,
            #[cfg(feature = "cuda")]
            $ty::Cuda($x) => $body,
            #[cfg(feature = "tch")]
            $ty::LibTorch($x) => $body,
        }
    };
}
pub(crate) use dispatch;

/// Whether reading a tensor back to the host is free: true for burn's CPU backends (flex, and
/// LibTorch on the CPU, the only device this crate gives it), whose tensors already live in host
/// memory and whose operations run synchronously. A device backend instead queues work, and
/// every read waits for the queue to drain.
pub(crate) fn host_reads_are_free<IB: Backend>() -> bool {
    let id = std::any::TypeId::of::<IB>();
    #[cfg(feature = "tch")]
    if id == std::any::TypeId::of::<burn::backend::LibTorch<f32>>() {
        return true;
    }
    id == std::any::TypeId::of::<burn::backend::Flex>()
}

/// The inner (non-autodiff) backend's device of an autodiff device.
pub(crate) fn to_inner_device<B: AutodiffBackend>(
    d: &B::Device,
) -> burn::tensor::Device<B::InnerBackend> {
    // Autodiff<B> shares its inner backend's device type.
    d.clone()
}

/// A tensor's data read back to the host as `f32`s.
pub(crate) fn to_vec(d: burn::tensor::TensorData) -> Result<Vec<f32>, TrainerError> {
    d.convert::<f32>()
        .into_vec::<f32>()
        .map_err(|e| TrainerError::Backend(format!("{e:?}")))
}
