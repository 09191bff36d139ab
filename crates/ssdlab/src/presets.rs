//! Drive presets: TOML files under `configs/drives/`, embedded at build time. Each overrides the
//! defaults of [`DriveConfig`].

use crate::config::DriveConfig;
use crate::error::{Error, Result};

const PRESETS: &[(&str, &str)] = &[
    (
        "mlc-256",
        include_str!("../../../configs/drives/mlc-256.toml"),
    ),
    (
        "active-gc",
        include_str!("../../../configs/drives/active-gc.toml"),
    ),
    (
        "clean-up-later",
        include_str!("../../../configs/drives/clean-up-later.toml"),
    ),
    (
        "idle-gc",
        include_str!("../../../configs/drives/idle-gc.toml"),
    ),
    (
        "no-idle-gc",
        include_str!("../../../configs/drives/no-idle-gc.toml"),
    ),
    (
        "compressing",
        include_str!("../../../configs/drives/compressing.toml"),
    ),
    (
        "tlc-dynamic-cache",
        include_str!("../../../configs/drives/tlc-dynamic-cache.toml"),
    ),
    (
        "qlc-hybrid-cache",
        include_str!("../../../configs/drives/qlc-hybrid-cache.toml"),
    ),
    (
        "tlc-enterprise",
        include_str!("../../../configs/drives/tlc-enterprise.toml"),
    ),
    (
        "dramless-hmb",
        include_str!("../../../configs/drives/dramless-hmb.toml"),
    ),
    (
        "dramless-sata",
        include_str!("../../../configs/drives/dramless-sata.toml"),
    ),
];

/// The default preset.
pub const DEFAULT: &str = "mlc-256";

/// Preset names, default first.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The named preset.
pub fn get(name: &str) -> Result<DriveConfig> {
    let (_, text) = PRESETS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        Error::Config(format!(
            "unknown drive '{name}'; choose one of: {} (see `ssdlab drives`)",
            names().join(", ")
        ))
    })?;
    let cfg = DriveConfig::from_toml(text)?;
    cfg.validate()?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_validates_and_is_named_after_its_file() {
        for name in names() {
            let cfg = get(name).unwrap();
            assert_eq!(cfg.name, name);
        }
        assert!(get("nope").is_err());
        // The defaults in config/mod.rs are the default preset.
        assert_eq!(get(DEFAULT).unwrap(), DriveConfig::default());
    }
}
