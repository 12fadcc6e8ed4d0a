//! The map held by a group of planners that share one site: the profiles of a
//! [`Fleet`](super::Fleet), or a lone [`Planner`] (a group of one).
//!
//! Every change to the map reaches the shared annotations once ([`SiteMap`]: occupancy values,
//! obstacle distance, clearance, every vehicle's mask and regions), then each profile follows
//! what changed in its own layers (collision map, Block A* pattern codes; the costs read the
//! site's values and obstacle distance, so they have nothing to follow). Profiles that read the
//! map alike (same traversability) share one copy of the blocked cells (a bit each): the first
//! profile holding it (its *donor*) builds and updates it, the others take it from that one. A
//! plan in flight keeps the
//! maps it started with: what it still holds is copied before it is changed (copy-on-write), and
//! nothing else is.

use super::prepared::{same_obstacles, Detached, Donor, MapUpdate, PreparedMap, SiteMap};
use super::{PlanError, Planner, PlannerConfig, StatusCode};
use crate::clearance::{ChangedRegion, PatchRect};
use crate::grid::CellRect;
use crate::map::OccupancyMap;
use std::sync::Arc;

/// Replaces the group's map: annotated once for every profile, then each profile's layers
/// derived on it (reusing its tables where they still apply). On error nothing changes.
pub(super) fn set_map(group: &mut [&mut Planner], map: OccupancyMap) -> Result<(), PlanError> {
    let max_cells = group.iter().map(|p| p.config.max_map_cells).min().unwrap_or(0);
    map.info.validate(max_cells)?;
    if map.data.len() != map.info.width * map.info.height {
        return Err(PlanError::new(
            StatusCode::InvalidInput,
            format!("map data has {} cells but the map is {}x{}", map.data.len(), map.info.width, map.info.height),
        ));
    }
    let configs = configs_of(group);
    let site = Arc::new(SiteMap::new(map, &configs.iter().collect::<Vec<_>>())?);
    derive_all(group, site, &configs)
}

/// Applies a rectangular patch of occupancy values (`data` row-major, `width * height` values) to
/// the group's map. Fails with `NO_MAP` when no map is held, or `INVALID_INPUT` when the patch
/// leaves the map or `data` has the wrong length; nothing changes then. One update per profile,
/// in the group's order.
pub(super) fn apply_patch(
    group: &mut [&mut Planner],
    rect: PatchRect,
    data: &[i8],
) -> Result<Vec<MapUpdate>, PlanError> {
    let held = group.first().and_then(|p| p.map.as_ref());
    let held = held.ok_or_else(|| PlanError::new(StatusCode::NoMap, "no map to patch"))?;
    let PatchRect { x, y, width, height } = rect;
    // Validated against the shared copy first, so a bad patch never triggers a copy.
    let (w, h) = (held.site.map().info.width as i64, held.site.map().info.height as i64);
    let fits = x >= 0
        && y >= 0
        && width > 0
        && height > 0
        && x.checked_add(width).is_some_and(|e| e <= w)
        && y.checked_add(height).is_some_and(|e| e <= h);
    if !fits || data.len() as i64 != width.saturating_mul(height) {
        return Err(PlanError::new(
            StatusCode::InvalidInput,
            format!("patch {width}x{height} at ({x}, {y}) with {} values does not fit the {w}x{h} map", data.len()),
        ));
    }
    edit_site(group, |site| {
        let changed = site
            .clearance
            .apply_patch(rect, data)
            .map_err(|e| PlanError::new(StatusCode::InvalidInput, format!("patch rejected: {e}")))?;
        let values = CellRect { x: x as usize, y: y as usize, width: width as usize, height: height as usize };
        Ok((changed, Some(values)))
    })
}

/// Replaces the group's map with `map`: with the same geometry only what differs is updated;
/// otherwise, or with no map held, everything is derived anew as by [`set_map`]. On error nothing
/// changes. One update per profile, in the group's order.
pub(super) fn update_map(group: &mut [&mut Planner], map: OccupancyMap) -> Result<Vec<MapUpdate>, PlanError> {
    let held = group.first().and_then(|p| p.map.as_ref());
    let same_geometry =
        held.is_some_and(|m| m.site.map().info == map.info && m.site.map().data.len() == map.data.len());
    let n = group.len();
    if !same_geometry || map.data.len() != map.info.width * map.info.height {
        let changed = Some(CellRect { x: 0, y: 0, width: map.info.width, height: map.info.height });
        set_map(group, map)?;
        return Ok(vec![MapUpdate { changed, rebuilt: true, costs_changed: changed, copied: false }; n]);
    }
    let held = held.expect("same geometry implies a held map").site.map();
    if held.data == map.data {
        return Ok(vec![MapUpdate { changed: None, rebuilt: false, costs_changed: None, copied: false }; n]);
    }
    let values = changed_values(held, &map);
    edit_site(group, |site| {
        let changed = site
            .clearance
            .replace_map(&map)
            .map_err(|e| PlanError::new(StatusCode::InvalidInput, format!("map rejected: {e}")))?;
        // The annotations hold the map: its values are now `map`'s (the geometry is the same).
        debug_assert!(site.map().data == map.data);
        Ok((changed, values))
    })
}

/// Gives the group's profiles the parameters `configs` (one per profile, in order), all or
/// nothing. The map's annotations are kept when they are exactly what the group needs under the
/// new parameters (no vehicle's size, traversability or the map's threshold changed); otherwise
/// they are made anew once for the whole group. Profiles whose parameters did not change keep
/// their maps as they are (unless the annotations were made anew). On error nothing changes.
pub(super) fn set_configs(group: &mut [&mut Planner], configs: Vec<PlannerConfig>) -> Result<(), PlanError> {
    if configs.len() != group.len() {
        let (got, want) = (configs.len(), group.len());
        return Err(PlanError::new(StatusCode::InvalidInput, format!("{got} parameter sets for {want} profiles")));
    }
    for c in &configs {
        c.validate()?;
    }
    let site = match group.first().and_then(|p| p.map.as_ref()) {
        None => None,
        Some(held) => {
            let wanted: Vec<&PlannerConfig> = configs.iter().collect();
            if held.site.fits(&wanted) {
                Some(held.site.clone())
            } else {
                Some(Arc::new(SiteMap::new(held.site.map().clone(), &wanted)?))
            }
        }
    };
    if let Some(site) = site {
        derive_all(group, site, &configs)?;
    }
    for (p, c) in group.iter_mut().zip(configs) {
        p.config = c;
    }
    Ok(())
}

fn configs_of(group: &[&mut Planner]) -> Vec<PlannerConfig> {
    group.iter().map(|p| p.config.clone()).collect()
}

/// Derives every profile's layers on `site` under `configs` (one per profile), reusing each
/// profile's tables, or another profile's, where they apply; all or nothing. A profile whose map already stands on
/// `site` under the same parameters keeps it.
fn derive_all(group: &mut [&mut Planner], site: Arc<SiteMap>, configs: &[PlannerConfig]) -> Result<(), PlanError> {
    let mut derived: Vec<Arc<PreparedMap>> = Vec::with_capacity(group.len());
    let mut made_anew = false;
    for (i, (p, config)) in group.iter().zip(configs).enumerate() {
        let unchanged = p.map.as_ref().filter(|m| Arc::ptr_eq(&m.site, &site) && p.config == *config);
        derived.push(match unchanged {
            Some(m) => m.clone(),
            None => {
                let donors = Donors::of(configs, i);
                // Directional A*'s tables: the profiles derived before this one, then those still
                // on their previous maps.
                let later = group[i + 1..].iter().filter_map(|q| q.map.as_ref());
                let refiners = derived.iter().chain(later).map(|m| m.refiner.clone()).collect();
                let donor = Donor { obstacles: donors.obstacles.map(|j| derived[j].collision.obstacles()), refiners };
                made_anew = true;
                Arc::new(PreparedMap::on_site_with(site.clone(), config, &p.lddb, p.map.as_deref(), donor)?)
            }
        });
    }
    let mut replaced = Vec::with_capacity(group.len());
    for (p, m) in group.iter_mut().zip(derived) {
        replaced.extend(p.map.replace(m));
    }
    // The maps replaced go first (those no plan in flight still holds), then what they and the
    // preparation freed goes back (`memory::trim_heap`); nothing to hand back when every
    // profile kept its map.
    drop(replaced);
    if made_anew {
        crate::memory::trim_heap();
    }
    Ok(())
}

/// Runs `edit` on the group's site, then has each profile follow what it changed. Returns one
/// update per profile. When `edit` fails (it must fail before changing anything) every profile
/// keeps its map. A profile's layers refusing to follow (not expected: they are derived from the
/// site that was just accepted) is returned as an error after the site changed.
fn edit_site(
    group: &mut [&mut Planner],
    edit: impl FnOnce(&mut SiteMap) -> Result<(ChangedRegion, Option<CellRect>), PlanError>,
) -> Result<Vec<MapUpdate>, PlanError> {
    // 1. Every profile hands its site back, so the site is held once (plus by plans in flight).
    let configs = configs_of(group);
    let mut site = None;
    let mut copied = false;
    let mut detached: Vec<Detached> = Vec::with_capacity(group.len());
    let mut donors = Vec::with_capacity(group.len());
    for (i, p) in group.iter_mut().enumerate() {
        let held = p.map.take().expect("the group holds a map (checked by the caller)");
        let (s, d) = Arc::try_unwrap(held)
            .unwrap_or_else(|shared| {
                copied = true;
                (*shared).clone()
            })
            .detach();
        debug_assert!(site.as_ref().is_none_or(|first| Arc::ptr_eq(first, &s)), "a group shares one site");
        donors.push(Donors::of(&configs, i));
        site = Some(s);
        detached.push(d);
    }
    let mut site = site.expect("a group has at least one profile");
    // 2. Edited once, in place (copied only when a plan in flight still holds it).
    copied |= Arc::strong_count(&site) > 1;
    let edited = edit(Arc::make_mut(&mut site));
    // 3. Refused: every profile back on it as it was.
    let (changed, values) = match edited {
        Ok(x) => x,
        Err(e) => {
            for (p, d) in group.iter_mut().zip(detached) {
                p.map = Some(Arc::new(d.attach(site.clone())));
            }
            return Err(e);
        }
    };
    // 4. The profiles that take a donor's copy give theirs up, so the donor holds it once and
    //    follows in place; a donor comes before the profiles it gives to, so it has followed
    //    when they take its copy.
    for (d, from) in detached.iter_mut().zip(&donors) {
        d.release(from);
    }
    // 5. Every profile back on it, following what changed.
    let mut updates: Vec<MapUpdate> = Vec::with_capacity(group.len());
    let mut failed = None;
    for (i, (d, from)) in detached.into_iter().zip(donors).enumerate() {
        let mut prepared = d.attach(site.clone());
        let donated = |j: usize| group[j].map.as_ref().expect("a donor has followed");
        let donor = Donor { obstacles: from.obstacles.map(|j| donated(j).collision.obstacles()), ..Default::default() };
        let update = prepared.follow(&changed, values, &group[i].config, &group[i].lddb, donor);
        match update {
            Ok(update) => updates.push(MapUpdate { copied, ..update }),
            Err(e) => {
                // Keeps the updates' order: a later profile finds its donor's at the donor's index.
                updates.push(MapUpdate { changed: changed.cells, rebuilt: true, costs_changed: changed.cells, copied });
                failed.get_or_insert(e);
            }
        }
        group[i].map = Some(Arc::new(prepared));
    }
    failed.map_or(Ok(updates), Err)
}

/// Which earlier profile of a group gives a profile its shared layers (see [`Donor`]): the
/// first whose map reads the same blocked cells.
pub(super) struct Donors {
    pub(super) obstacles: Option<usize>,
}

impl Donors {
    /// Profile `i`'s donors among `configs` (the group's parameters, in order).
    fn of(configs: &[PlannerConfig], i: usize) -> Self {
        Self { obstacles: (0..i).find(|&j| same_obstacles(&configs[j], &configs[i])) }
    }
}

/// The bounding box of the cells whose values differ between two maps of the same geometry
/// (`None`: none).
fn changed_values(old: &OccupancyMap, new: &OccupancyMap) -> Option<CellRect> {
    let w = old.info.width;
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (k, _) in old.data.iter().zip(&new.data).enumerate().filter(|(_, (a, b))| a != b) {
        let (x, y) = (k % w, k / w);
        (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
    }
    (x0 != usize::MAX).then(|| CellRect { x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 })
}
