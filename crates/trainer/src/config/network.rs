//! The network's shape ([`ModelConfig`]): its image encoder, text channels and layers, and
//! what it costs in parameters.

use envdist_core::InvalidValue;
use serde::{Deserialize, Serialize};

use crate::error::TrainerError;

/// Text channels the model reads, in input order. The instruction is always present; the four
/// harness channels only at the levels that keep them.
pub const NUM_CHANNELS: usize = 5;

/// How the network reads the frame (see [`crate::model`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImageEncoder {
    /// `patch x patch` patches, one shared patch embedding (`patch_dim` wide), then one dense
    /// layer over every patch position: weights are shared across positions only within a
    /// patch. What the first records used, hence the default of a config that names none.
    #[default]
    PatchMlp,
    /// Three stride-2 convolutions (kernels `conv_kernels`, default 5, 3, 3; zero padding
    /// `conv_padding`, default none; `conv_channels` wide; ReLU), then a dense layer over the
    /// last feature map: features shared across positions, as in the small CNNs of
    /// Stable-Baselines3 or CleanRL.
    Conv,
}

impl ImageEncoder {
    /// The encoder's name in configs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::PatchMlp => "patch-mlp",
            Self::Conv => "conv",
        }
    }
}

impl std::str::FromStr for ImageEncoder {
    type Err = TrainerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "patch-mlp" => Ok(Self::PatchMlp),
            "conv" => Ok(Self::Conv),
            other => Err(TrainerError::Config(InvalidValue::new(
                "model.encoder",
                "patch-mlp or conv",
                format!("{other:?}"),
            ))),
        }
    }
}

/// How the network's dense and convolution weights are drawn (see [`crate::model`]). Biases
/// start at zero and the text embedding at unit variance either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightInit {
    /// Kaiming-uniform (ReLU gain), the policy head at 0.01 of it and the value head at 0.5:
    /// what the first records used, hence the default of a config that names none.
    #[default]
    KaimingUniform,
    /// Orthogonal, as Stable-Baselines3's and CleanRL's PPO draw it: gain sqrt(2) on the
    /// hidden layers, 0.01 on the policy head, 1 on the value head.
    Orthogonal,
}

impl WeightInit {
    /// Whether this is the default (a config that names none), which is not serialised, so
    /// the configs of earlier records stay the same text.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Stride of every convolution of [`ImageEncoder::Conv`].
pub const CONV_STRIDE: usize = 2;

fn default_conv_channels() -> [usize; 3] {
    [16, 32, 32]
}

/// The kernels every config before `conv_kernels` existed used (the first convolution runs on
/// the host as an im2col of the frame, see [`crate::encode`]).
fn default_conv_kernels() -> [usize; 3] {
    [5, 3, 3]
}

/// Shape of the policy network (see [`crate::model`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Side of the square frame the network sees; env frames are box-filtered down to it.
    pub image_size: usize,
    /// The image encoder. Default (when a config names none): `patch-mlp`.
    #[serde(default)]
    pub encoder: ImageEncoder,
    /// `patch-mlp`: side of one square image patch (must divide `image_size`).
    pub patch: usize,
    /// `patch-mlp`: width of one patch embedding.
    pub patch_dim: usize,
    /// `conv`: widths of the three convolutions. Default `[16, 32, 32]`.
    #[serde(default = "default_conv_channels")]
    pub conv_channels: [usize; 3],
    /// `conv`: kernel sides of the three convolutions. Default `[5, 3, 3]`.
    #[serde(default = "default_conv_kernels")]
    pub conv_kernels: [usize; 3],
    /// `conv`: zeros added on every side of each convolution's input (1 with 3x3 kernels keeps
    /// the border cells in as many receptive fields as the inner ones). Default 0.
    #[serde(default)]
    pub conv_padding: usize,
    /// Width of the image feature (after the encoder's last dense layer).
    pub image_dim: usize,
    /// Hash buckets of the bag-of-tokens text encoder.
    pub vocab: usize,
    /// Width of one text channel's embedding.
    pub text_dim: usize,
    /// Width of the fused hidden layer that feeds both heads.
    pub hidden: usize,
    /// How the weights are drawn. Default (when a config names none): `kaiming-uniform`.
    #[serde(default, skip_serializing_if = "WeightInit::is_default")]
    pub init: WeightInit,
}

impl ModelConfig {
    /// Small enough to train at a few thousand env steps per second on two CPU cores:
    /// 32x32 frames in 8x8 patches (the patch-MLP of the anchor table), ~0.4 M parameters.
    pub fn cpu() -> Self {
        Self {
            image_size: 32,
            encoder: ImageEncoder::PatchMlp,
            patch: 8,
            patch_dim: 64,
            conv_channels: default_conv_channels(),
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 256,
            vocab: 1024,
            text_dim: 32,
            hidden: 256,
        }
    }

    /// Larger for CUDA: 64x64 frames in 8x8 patches, wider layers (~4.5 M parameters).
    pub fn gpu() -> Self {
        Self {
            image_size: 64,
            encoder: ImageEncoder::PatchMlp,
            patch: 8,
            patch_dim: 128,
            conv_channels: [32, 64, 64],
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 512,
            vocab: 4096,
            text_dim: 64,
            hidden: 512,
        }
    }

    /// A very small network for unit tests.
    pub fn tiny() -> Self {
        Self {
            image_size: 16,
            encoder: ImageEncoder::PatchMlp,
            patch: 4,
            patch_dim: 16,
            conv_channels: [8, 16, 16],
            conv_kernels: default_conv_kernels(),
            conv_padding: 0,
            init: WeightInit::KaimingUniform,
            image_dim: 64,
            vocab: 256,
            text_dim: 16,
            hidden: 64,
        }
    }

    /// Number of parameters of the network this shape builds (the length of an unprojected
    /// gradient of every parameter), or `None` when it does not fit in a `usize`. Known
    /// before anything is allocated: a checkpoint's config is checked against the size of its
    /// model file with it.
    pub fn num_params(&self) -> Option<usize> {
        let (actions, channels) = (envdist_core::NUM_ACTIONS, NUM_CHANNELS);
        let linear = |d_in: usize, d_out: usize, bias: bool| {
            d_in.checked_mul(d_out)?
                .checked_add(if bias { d_out } else { 0 })
        };
        let image: Vec<Option<usize>> = match self.encoder {
            ImageEncoder::PatchMlp => {
                let side = self.image_size.checked_div(self.patch)?;
                let patches = side.checked_mul(side)?;
                let patch_values = self.patch.checked_mul(self.patch)?.checked_mul(3)?;
                vec![
                    linear(patch_values, self.patch_dim, true),
                    linear(patches.checked_mul(self.patch_dim)?, self.image_dim, true),
                ]
            }
            ImageEncoder::Conv => {
                let [c1, c2, c3] = self.conv_channels;
                let [k1, k2, k3] = self.conv_kernels.map(|k| k.checked_mul(k));
                let side = self.conv_sides()?[2];
                vec![
                    linear(k1?.checked_mul(3)?, c1, true),
                    linear(k2?.checked_mul(c1)?, c2, true),
                    linear(k3?.checked_mul(c2)?, c3, true),
                    linear(
                        side.checked_mul(side)?.checked_mul(c3)?,
                        self.image_dim,
                        true,
                    ),
                ]
            }
        };
        let fused_in = channels
            .checked_mul(self.text_dim)?
            .checked_add(self.image_dim)?;
        image
            .into_iter()
            .chain([
                linear(self.vocab, self.text_dim, false),
                linear(channels, self.text_dim, false),
                linear(fused_in, self.hidden, true),
                linear(self.hidden, actions, true),
                linear(self.hidden, 1, true),
            ])
            .try_fold(0usize, |acc, n| acc.checked_add(n?))
    }

    /// `conv`: the side of each convolution's output map, or `None` when the frame is too
    /// small for the three layers (each needs a padded map at least as wide as its kernel).
    pub fn conv_sides(&self) -> Option<[usize; 3]> {
        let pad = self.conv_padding.checked_mul(2)?;
        let out = |side: usize, k: usize| {
            side.checked_add(pad)?
                .checked_sub(k)
                .map(|d| d / CONV_STRIDE + 1)
        };
        let [k1, k2, k3] = self.conv_kernels;
        let s1 = out(self.image_size, k1)?;
        let s2 = out(s1, k2)?;
        let s3 = out(s2, k3)?;
        Some([s1, s2, s3])
    }

    /// Rows the first image layer reads per frame: patches (`patch-mlp`) or the first
    /// convolution's output positions (`conv`).
    pub fn num_patches(&self) -> usize {
        match self.encoder {
            ImageEncoder::PatchMlp => (self.image_size / self.patch).pow(2),
            ImageEncoder::Conv => self.conv_sides().map_or(0, |s| s[0] * s[0]),
        }
    }

    /// Values of one such row (RGB): a patch, or the first convolution's receptive field.
    pub fn patch_values(&self) -> usize {
        match self.encoder {
            ImageEncoder::PatchMlp => self.patch * self.patch * 3,
            ImageEncoder::Conv => self.conv_kernels[0].saturating_mul(self.conv_kernels[0]) * 3,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), TrainerError> {
        let bad = |field: &str, expected: &str, found: String| {
            Err(TrainerError::Config(InvalidValue::new(
                format!("model.{field}"),
                expected,
                found,
            )))
        };
        match self.encoder {
            ImageEncoder::PatchMlp => {
                if self.patch == 0
                    || self.image_size == 0
                    || !self.image_size.is_multiple_of(self.patch)
                {
                    return bad(
                        "patch",
                        "a positive divisor of image_size",
                        format!("patch {} for image_size {}", self.patch, self.image_size),
                    );
                }
            }
            ImageEncoder::Conv => {
                if let Some(i) = self.conv_kernels.iter().position(|&k| k == 0) {
                    return bad(
                        &format!("conv_kernels[{i}]"),
                        "a positive kernel side",
                        self.conv_kernels[i].to_string(),
                    );
                }
                if self.conv_padding >= self.conv_kernels.into_iter().min().unwrap_or(1) {
                    return bad(
                        "conv_padding",
                        &format!(
                            "less than the smallest kernel side, {:?} (a wider padding makes \
                             outputs that read only zeros)",
                            self.conv_kernels
                        ),
                        self.conv_padding.to_string(),
                    );
                }
                if self.conv_sides().is_none_or(|s| s[2] == 0) {
                    // The smallest frame the three layers fit, for the message.
                    let smallest = (1..=4096).find(|&size| {
                        let c = Self {
                            image_size: size,
                            ..self.clone()
                        };
                        c.conv_sides().is_some_and(|s| s[2] > 0)
                    });
                    return bad(
                        "image_size",
                        &format!(
                            "at least {} for the conv encoder (three stride-2 convolutions of \
                             kernels {:?}, padding {})",
                            smallest.map_or("?".into(), |s| s.to_string()),
                            self.conv_kernels,
                            self.conv_padding
                        ),
                        self.image_size.to_string(),
                    );
                }
                if let Some(i) = self.conv_channels.iter().position(|&c| c == 0) {
                    return bad(
                        &format!("conv_channels[{i}]"),
                        "a positive width",
                        "0".into(),
                    );
                }
            }
        }
        for (name, v) in [
            ("patch_dim", self.patch_dim),
            ("image_dim", self.image_dim),
            ("vocab", self.vocab),
            ("text_dim", self.text_dim),
            ("hidden", self.hidden),
        ] {
            if v == 0 {
                return bad(name, "a positive width", "0".into());
            }
        }
        if self.vocab > u16::MAX as usize + 1 {
            return bad("vocab", "at most 65536 buckets", self.vocab.to_string());
        }
        if self.num_params().is_none() {
            return bad(
                "image_size",
                "a network whose parameter count fits in memory",
                format!("{self:?}"),
            );
        }
        Ok(())
    }
}
