//! The views, and their registry. Each view works on any bundle whose tables have the columns it
//! needs, so new plugins and pipelines light up without viewer changes.
//!
//! A view is one module implementing [`crate::view::View`] and one line in the `views!` list
//! below (which declares the module and registers the view in [`VIEWS`]).

pub mod axes;
pub mod common;

use crate::view::{Registered, ViewKind};

/// Declares each view's module and lists its view in [`VIEWS`]: `module::View` is the one line a
/// view takes here.
macro_rules! views {
    ($($module:ident :: $view:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every view, in tab order.
        pub static VIEWS: &[&dyn ViewKind] = &[$(Registered::<$module::$view>::KIND),*];
    };
}

views! {
    home::Home,
    provenance::Bundles,
    tables::Tables,
    model::Model,
    validation::Validation,
    scores::Scores,
    cost::CostBreakdown,
    gantt::Gantt,
    ranks::RankBars,
    throughput::Throughput,
    scaling::Scaling,
}

/// The view named `slug`.
pub fn by_slug(slug: &str) -> Option<&'static dyn ViewKind> {
    VIEWS.iter().copied().find(|v| v.slug() == slug)
}

/// The first bundle the view has anything to show for (the desktop tour looks at each view
/// there); none when no bundle has.
pub fn bundle_showing(
    bundles: &[crate::data::LoadedBundle],
    view: &dyn ViewKind,
) -> Option<String> {
    bundles
        .iter()
        .find(|b| view.has_content(b))
        .map(crate::data::LoadedBundle::name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Explains;

    /// Slugs name views in URLs, saved states and file names: unique, lowercase ASCII. The home
    /// opens first; one view of last resort shows any table; the home's ranks are distinct.
    #[test]
    fn the_registry_names_each_view_once() {
        let mut slugs: Vec<&str> = VIEWS.iter().map(|v| v.slug()).collect();
        assert!(
            slugs
                .iter()
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
        slugs.sort_unstable();
        slugs.dedup();
        assert_eq!(slugs.len(), VIEWS.len(), "a slug is used twice");
        assert_eq!(VIEWS[0].slug(), "home");
        let any_table = VIEWS
            .iter()
            .filter(|v| v.explains() == Explains::AnyTable)
            .count();
        assert_eq!(any_table, 1);
        let mut ranks: Vec<u8> = VIEWS
            .iter()
            .filter_map(|v| match v.explains() {
                Explains::Rank(r) => Some(r),
                _ => None,
            })
            .collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n, "two views share a rank");
    }
}
