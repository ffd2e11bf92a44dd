//! The `workbench` binary: parse the command line, log to stderr, then serve MCP on stdio (the
//! default) or run one terminal command from `workbench::cli`.
//!
//! Layout for additions: a new command is a variant of [`Command`] plus one arm in [`run`]; its work
//! lives in the library (`workbench::cli` or its own module), never here.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tracing_subscriber::filter::LevelFilter;
use workbench::cli::exit;
use workbench::clients::{Client, Op};

const AFTER_HELP: &str = "\
Examples:
  workbench                                   serve MCP on stdio (what MCP clients launch)
  workbench doctor                            check this machine; each failure says how to fix it
  workbench setup                             choose where secrets live when no OS keychain answers
  workbench connect github                    connect an account on a local page, then wait
  workbench tools search list open pull requests
  workbench tools schema github_list_prs
  workbench tools call time_get_current '{\"timezone\": \"Europe/Lisbon\"}'
  workbench tools call --batch batch.json     a whole execute_tools batch from a file (- for stdin)
  workbench clients register --dry-run        show what registering with the clients would change
  workbench portal                            a local web page: accounts, audit log, secrets, custom apps
  workbench serve --profile runstack          the four tools of the Runstack design instead of the nine
  workbench servers import                    put the MCP servers your clients run behind workbench
  workbench servers add clock -- uvx mcp-server-time
  workbench servers list                      the servers behind workbench: state, tool count, last error
  workbench servers review                    tools a server changed since you accepted them

Client config (Claude Desktop, Cursor; `workbench clients register` writes it):
  { \"mcpServers\": { \"workbench\": { \"command\": \"/home/you/.local/bin/workbench\" } } }

Exit status:
  0  done
  1  the command ran and something failed (a tool error, a doctor FAIL, a refused client config)
  2  the command line or its JSON input was wrong; nothing was done

Environment:
  WORKBENCH_HOME          data directory (default: the platform data dir)
  WORKBENCH_LOG           log level on stderr: error, warn, info, debug, trace (default: warn)
  WORKBENCH_SECRET_STORE  keychain (default), file or memory (config.json's secret_store, which
                          `workbench setup` writes, is what the servers clients launch see)
  WORKBENCH_<INTEGRATION>_<FIELD>  a credential from the environment, e.g. WORKBENCH_GITHUB_TOKEN";

/// The one line (on stderr; stdout is the protocol) for `workbench` started from a terminal.
const TERMINAL_NOTE: &str = "workbench: this is an MCP server for clients such as Cursor, Claude Code and Claude Desktop; it now waits for JSON-RPC on stdin (Ctrl-D to quit). For the terminal commands see `workbench --help`.";

/// workbench — a local MCP tool gateway: nine meta-tools in front of a catalogue of service tools.
#[derive(Parser)]
#[command(name = "workbench", version, after_help = AFTER_HELP, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Speak MCP on stdin/stdout (the default with no command)
    Serve(ServeArgs),
    /// Check the data directory, database, secret store, loopback port and client registrations
    Doctor,
    /// Choose where secrets live when no OS keychain answers (once; install.sh runs it)
    Setup {
        /// keychain, or file: the encrypted file store opened by a key file, recorded in config.json
        #[arg(long, value_enum, value_name = "STORE")]
        secret_store: Option<StoreChoice>,
    },
    /// List integrations with their connection state, and the secret store in use
    Status,
    /// Connect an account: opens the local connect page and waits until it is completed
    Connect {
        /// The integration, e.g. github (`workbench status` lists them)
        integration: String,
        /// The account to connect or reconnect, e.g. work (a new name adds an account)
        #[arg(long)]
        account: Option<String>,
        /// Make this account the integration's default (at once if it is connected already)
        #[arg(long)]
        default: bool,
    },
    /// Disconnect an account: revoke its token where the provider allows, erase the stored credential
    Disconnect {
        /// The integration, e.g. github
        integration: String,
        /// The account to disconnect, e.g. work (default: the integration's default account)
        #[arg(long)]
        account: Option<String>,
        /// Only erase the local credential; do not ask the provider to revoke the token
        #[arg(long)]
        no_revoke: bool,
    },
    /// Search, inspect and run tools from the terminal with the agent's engine (JSON on stdout)
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Register workbench with Claude Desktop, Cursor and Claude Code, or remove it
    #[command(subcommand)]
    Clients(ClientsCommand),
    /// Open the local portal (integrations, audit log, secrets, custom apps) until Ctrl-C
    Portal,
    /// Your other MCP servers behind workbench's tools: add, list, remove, import from clients
    #[command(subcommand)]
    Servers(ServersCommand),
}

#[derive(Subcommand)]
enum ServersCommand {
    /// Add an MCP server: `workbench servers add clock -- uvx mcp-server-time` (or `-- URL`)
    Add {
        /// Its name: the tools' prefix (`<name>_<tool>`) and policy key
        name: String,
        /// The command and its arguments, after `--`
        #[arg(last = true, required = true, num_args = 1..)]
        command: Vec<String>,
    },
    /// Each configured server: state, tool count, last error
    List,
    /// Remove a server from config.json and forget its cached tools
    Remove { name: String },
    /// Show tools whose definitions changed since you accepted them (or are new); accept them
    Review {
        /// Only this server (needed with --accept)
        name: Option<String>,
        /// Accept the server's current tool definitions: they become searchable and callable
        #[arg(long, requires = "name")]
        accept: bool,
    },
    /// Offer the servers Claude Desktop, Cursor and Claude Code run; add them to workbench
    Import {
        /// Only this client (repeatable): claude-desktop, cursor, claude-code
        #[arg(long = "client", value_name = "CLIENT", value_parser = parse_client)]
        clients: Vec<Client>,
        /// Add them without asking
        #[arg(long)]
        yes: bool,
        /// Also remove them from the clients' configs and register workbench there (backup first)
        #[arg(long)]
        replace: bool,
        /// Show what would be imported; change nothing
        #[arg(long)]
        dry_run: bool,
    },
}

/// The `--secret-store` value of `setup`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StoreChoice {
    /// The OS keychain
    Keychain,
    /// The encrypted file store opened by a key file
    File,
}

#[derive(Args, Default)]
struct ServeArgs {
    /// Which tool surface to serve
    #[arg(long, value_enum, default_value_t = ProfileChoice::Default)]
    profile: ProfileChoice,
}

/// The `--profile` value: which `workbench::mcp::Profile` to serve.
#[derive(Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
enum ProfileChoice {
    /// The nine meta-tools
    #[default]
    Default,
    /// The four-tool compatibility surface
    Runstack,
}

#[derive(Subcommand)]
enum ToolsCommand {
    /// Rank tools for a request, as search_tools does
    Search {
        /// What you want to do; several words need no quotes
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Most results to show
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=50))]
        limit: u32,
    },
    /// Print a tool's JSON Schema, as get_tool_schema does
    Schema {
        /// The tool's name, e.g. github_list_pull_requests
        tool: String,
    },
    /// Run a tool (or a batch) through the execute_tools engine
    Call(CallArgs),
}

#[derive(Args)]
struct CallArgs {
    /// The tool to run
    #[arg(required_unless_present = "batch")]
    tool: Option<String>,
    /// Its arguments as a JSON object; `-` reads stdin, `@FILE` a file [default: {}]
    args: Option<String>,
    /// Run an execute_tools batch from FILE (`-` for stdin): a list of {tool, args, ref_id?} or
    /// {executions, compose?, return?}
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tool", "args"])]
    batch: Option<String>,
}

#[derive(Subcommand)]
enum ClientsCommand {
    /// Add workbench to each installed client's config (other content is kept byte for byte)
    Register {
        #[command(flatten)]
        target: ClientTarget,
        /// The binary the clients should run [default: this one]
        #[arg(long, value_name = "PATH")]
        command: Option<PathBuf>,
    },
    /// Remove workbench's entry from each installed client's config
    Unregister {
        #[command(flatten)]
        target: ClientTarget,
    },
    /// Show each client's config file and whether workbench is registered there
    List,
}

#[derive(Args)]
struct ClientTarget {
    /// Only this client (repeatable): claude-desktop, cursor, claude-code
    #[arg(long = "client", value_name = "CLIENT", value_parser = parse_client)]
    clients: Vec<Client>,
    /// Print what would change; write nothing
    #[arg(long)]
    dry_run: bool,
}

/// A `--client` value that names no client.
#[derive(Debug, thiserror::Error)]
#[error("unknown client '{0}' (one of: {ids})", ids = Client::ALL.iter().map(|c| c.id()).collect::<Vec<_>>().join(", "))]
struct UnknownClient(String);

fn parse_client(s: &str) -> Result<Client, UnknownClient> {
    Client::from_id(s).ok_or_else(|| UnknownClient(s.to_string()))
}

fn main() -> ExitCode {
    // `workbench` alone is what MCP clients launch, at every session start: serve at once, without
    // building the parser's definitions of every command (the same outcome as parsing no args).
    let command = if std::env::args_os().len() <= 1 { None } else { Cli::parse().command };
    ExitCode::from(run(command.unwrap_or(Command::Serve(ServeArgs::default()))))
}

fn run(command: Command) -> u8 {
    init_logging();
    match command {
        Command::Serve(args) => serve_stdio(args.profile),
        Command::Doctor => workbench::cli::doctor(),
        Command::Setup { secret_store } => workbench::setup::run(secret_store.map(|c| match c {
            StoreChoice::Keychain => workbench::setup::Choice::Keychain,
            StoreChoice::File => workbench::setup::Choice::File,
        })),
        Command::Clients(ClientsCommand::List) => {
            let Some(loc) = workbench::clients::Locations::from_env() else {
                eprintln!("workbench: HOME is not set, so client configs cannot be found");
                return exit::FAILED;
            };
            let checks: Vec<_> = Client::ALL.iter().map(|c| workbench::doctor::client(&loc, *c)).collect();
            workbench::doctor::print(&checks, &mut std::io::stdout())
        }
        Command::Clients(ClientsCommand::Register { target, command }) => {
            match workbench::cli::registration_command(command.as_deref(), target.dry_run) {
                Ok(cmd) => workbench::cli::clients(Op::Register(&cmd), &target.clients, target.dry_run),
                Err(e) => {
                    eprintln!("workbench: {e}");
                    exit::USAGE
                }
            }
        }
        Command::Clients(ClientsCommand::Unregister { target }) => {
            workbench::cli::clients(Op::Unregister, &target.clients, target.dry_run)
        }
        Command::Servers(ServersCommand::Add { name, command }) => {
            match workbench::cli::servers_add_config(&name, &command) {
                Ok(_) => with_app(|app| async move { workbench::cli::servers_fetch(&app, &name).await }),
                Err(e) => usage_error(&e),
            }
        }
        Command::Servers(ServersCommand::List) => with_app(|app| async move { workbench::cli::servers_list(&app) }),
        Command::Servers(ServersCommand::Remove { name }) => {
            with_app(|app| async move { workbench::cli::servers_remove(&app, &name).await })
        }
        Command::Servers(ServersCommand::Review { name, accept }) => {
            with_app(|app| async move { workbench::cli::servers_review(&app, name.as_deref(), accept) })
        }
        Command::Servers(ServersCommand::Import { clients, yes, replace, dry_run }) => {
            let (status, added) = workbench::cli::servers_import(&clients, yes, replace, dry_run);
            if added.is_empty() {
                return status;
            }
            let fetched = with_app(|app| async move { workbench::cli::servers_fetch_all(&app, &added).await });
            status.max(fetched)
        }
        Command::Status => with_app(|app| async move { workbench::cli::status(&app) }),
        Command::Portal => with_app(|app| async move { workbench::portal::run(&app).await }),
        Command::Connect { integration, account, default } => with_app(|app| async move {
            workbench::cli::connect_account(&app, &integration, account.as_deref(), default).await
        }),
        Command::Disconnect { integration, account, no_revoke } => with_app(|app| async move {
            workbench::cli::disconnect_account(&app, &integration, account.as_deref(), !no_revoke).await
        }),
        Command::Tools(ToolsCommand::Search { query, limit }) => {
            with_app(|app| async move { workbench::cli::tools_search(&app, &query.join(" "), limit).await })
        }
        Command::Tools(ToolsCommand::Schema { tool }) => {
            with_app(|app| async move { workbench::cli::tools_schema(&app, &tool).await })
        }
        Command::Tools(ToolsCommand::Call(call)) => match call.batch {
            Some(file) => {
                let batch = workbench::cli::read_json_arg(&batch_source(&file), "the batch")
                    .and_then(workbench::cli::parse_batch);
                match batch {
                    Ok(b) => with_app(|app| async move { workbench::cli::tools_batch(&app, b).await }),
                    Err(e) => usage_error(&e),
                }
            }
            None => {
                let tool = call.tool.unwrap_or_default();
                match workbench::cli::read_json_arg(call.args.as_deref().unwrap_or("{}"), "the arguments") {
                    Ok(args) => with_app(|app| async move { workbench::cli::tools_call(&app, &tool, args).await }),
                    Err(e) => usage_error(&e),
                }
            }
        },
    }
}

/// `--batch FILE` names a file (or `-`); read_json_arg takes `@FILE` for files.
fn batch_source(file: &str) -> String {
    if file == "-" { file.to_string() } else { format!("@{file}") }
}

fn usage_error(message: &dyn std::fmt::Display) -> u8 {
    eprintln!("workbench: {message}");
    exit::USAGE
}

/// Runs a terminal command with the same settings, stores and engine as the server.
fn with_app<F, Fut>(f: F) -> u8
where
    F: FnOnce(std::sync::Arc<workbench::app::App>) -> Fut,
    Fut: std::future::Future<Output = u8>,
{
    let settings = match workbench::config::Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let Some(runtime) = runtime() else { return exit::FAILED };
    let app = workbench::app::App::new(settings);
    runtime.block_on(f(app))
}

fn runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("workbench: cannot start the async runtime: {e}");
            None
        }
    }
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
    // stderr at `level` (stdout is the protocol), plus forwarding to the MCP client at its level.
    workbench::mcp::logging::init_tracing(level);
}

/// `workbench` / `workbench serve [--profile NAME]`: MCP on stdin/stdout until stdin closes.
fn serve_stdio(profile: ProfileChoice) -> u8 {
    // A person who typed `workbench` would otherwise wait on a silent JSON-RPC server.
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!("{TERMINAL_NOTE}");
    }
    let profile = match profile {
        ProfileChoice::Default => workbench::mcp::Profile::Default,
        ProfileChoice::Runstack => workbench::mcp::Profile::Runstack,
    };
    let Some(runtime) = runtime() else { return exit::FAILED };
    match runtime.block_on(serve(profile)) {
        Ok(()) => exit::OK,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("workbench: {e:#}");
            exit::FAILED
        }
    }
}

async fn serve(profile: workbench::mcp::Profile) -> anyhow::Result<()> {
    let settings = workbench::config::Settings::from_env()?;
    workbench::mcp::serve_stdio(workbench::app::App::new(settings), profile).await
}
