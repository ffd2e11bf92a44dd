//! The `workbench` binary: parse the command line, log to stderr, serve MCP on stdio.

use std::process::ExitCode;

use tracing_subscriber::filter::LevelFilter;

const HELP: &str = "workbench — a local MCP tool gateway

USAGE:
    workbench [serve]               speak MCP on stdin/stdout (what desktop clients launch)
    workbench connect <integration> connect an account now: opens the local page and waits
    workbench status                integrations, connection state and the secret store in use
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
    match args.first().map(String::as_str) {
        None | Some("serve") => {}
        Some("connect") | Some("status") => return run_command(&args),
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
    match runtime.block_on(serve()) {
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
    // stdout is the protocol: logs go to stderr, always.
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_max_level(level).init();
}

async fn serve() -> anyhow::Result<()> {
    let settings = workbench::config::Settings::from_env()?;
    let app = workbench::app::App::new(settings);
    workbench::mcp::transport::serve_stdio(app).await
}
