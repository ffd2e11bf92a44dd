//! `workbench doctor`: every check, printed.

use crate::app::App;
use crate::clients::Locations;

/// `doctor`: every check, printed; the exit status says whether any FAILed.
pub fn doctor() -> u8 {
    let settings = crate::config::Settings::from_env();
    let app = settings.as_ref().ok().map(|s| App::new(s.clone()));
    let store = app.as_ref().map(|a| a.secrets.clone());
    let loc = Locations::from_env();
    out!("workbench {} doctor", env!("CARGO_PKG_VERSION"));
    let vars: std::collections::HashMap<String, String> = std::env::vars().collect();
    let mut checks = crate::doctor::run(&settings, store, loc.as_ref(), &vars);
    checks.extend(app.as_ref().and_then(|a| crate::doctor::upstream_servers(a)));
    crate::doctor::print(&checks, &mut std::io::stdout())
}
