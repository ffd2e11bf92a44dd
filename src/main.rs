//! The `workbench` binary: parse the command line, log to stderr, serve MCP on stdio.

use std::process::ExitCode;

use tracing_subscriber::filter::LevelFilter;

const HELP: &str = "workbench — a local MCP tool gateway

USAGE:
    workbench [serve]               speak MCP on stdin/stdout (what desktop clients launch)
    workbench serve --profile runstack   the four tools of the Runstack design instead of the nine
    workbench connect <integration> connect an account now: opens the local page and waits
    workbench status                integrations, connection state and the secret store in use
    workbench portal                a local web page: accounts, audit log, secrets (until Ctrl-C)
    workbench --version
    workbench --help

ENVIRONMENT:
    WORKBENCH_HOME         data directory (default: the platform data dir)
    WORKBENCH_LOG          log level on stderr: error, warn, info, debug, trace (default: warn)
    WORKBENCH_<INTEGRATION>_BASE_URL   point an integration at another host

EXAMPLE (Claude Desktop / Cursor config):
    { \"mcpServers\": { \"workbench\": { \"command\": \"workbench\" } } }
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut profile = workbench::mcp::Profile::Default;
    match args.first().map(String::as_str) {
        None => {}
        Some("serve") => match args.get(1..).unwrap_or_default() {
            [] => {}
            [flag, name] if flag == "--profile" => match workbench::mcp::Profile::from_name(name) {
                Ok(p) => profile = p,
                Err(e) => {
                    eprintln!("workbench: {e}");
                    return ExitCode::from(2);
                }
            },
            rest => {
                eprintln!("workbench: serve takes only --profile <default|runstack>, got {rest:?}\n\n{HELP}");
                return ExitCode::from(2);
            }
        },
        Some("connect") | Some("status") | Some("portal") => return run_command(&args),
        Some("--version") | Some("-V") => {
            println!("workbench {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some("--help") | Some("-h") | Some("help") => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("workbench: unknown command '{other}'\n\n{HELP}");
            return ExitCode::from(2);
        }
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("workbench: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(profile)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("workbench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Terminal commands share the server's engine: same settings, same stores, same pages.
fn run_command(args: &[String]) -> ExitCode {
    init_logging();
    let settings = match workbench::config::Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("workbench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("workbench: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let app = workbench::app::App::new(settings);
    runtime
        .block_on(async move {
            match args[0].as_str() {
                "status" => workbench::cli::status(&app),
                "portal" => workbench::portal::run(&app).await,
                _ => match args.get(1) {
                    Some(integration) => workbench::cli::connect(&app, integration).await,
                    None => {
                        eprintln!("usage: workbench connect <integration>   (see `workbench status` for names)");
                        2
                    }
                },
            }
        })
        .into()
}

fn init_logging() {
    let level = match std::env::var("WORKBENCH_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "error" => LevelFilter::ERROR,
        "warn" => LevelFilter::WARN,
        "debug" => LevelFilter::DEBUG,
        "trace" => LevelFilter::TRACE,
        "info" => LevelFilter::INFO,
        "off" => LevelFilter::OFF,
        _ => LevelFilter::WARN,
    };
    // stderr at `level`, plus forwarding to the MCP client at the level it asks for.
    workbench::mcp::logging::init_tracing(level);
}

async fn serve(profile: workbench::mcp::Profile) -> anyhow::Result<()> {
    let settings = workbench::config::Settings::from_env()?;
    workbench::mcp::serve_stdio(workbench::app::App::new(settings), profile).await
}
