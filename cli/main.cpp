// dispatchctl: the staff and operator command line. Each subcommand lives in its own file;
// this one only dispatches.
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli/args.h"

namespace {

constexpr const char* k_usage =
    "usage: dispatchctl COMMAND [OPTIONS]\n"
    "\n"
    "  validate --catalog FILE [--source FILE] [--sender ID] [--max-bytes N]\n"
    "      validate the model reply on stdin; prints the verdict as JSON\n"
    "      exit 0 valid, 1 rejected, 2 usage error\n"
    "  extract [--max-bytes N]\n"
    "      show the JSON the extractor finds in the reply on stdin, and its repairs\n"
    "  catalog lint --catalog FILE\n"
    "      check a catalog file and its examples\n"
    "  catalog schema --catalog FILE [--dialect jsonschema|openai|gemini|prompt]\n"
    "      render the output contract\n"
    "  migrate --db FILE|URI | --config FILE [--migrations DIR]\n"
    "      apply the pending schema migrations (forward-only, checksummed); a postgresql:// URI\n"
    "      gets migrations/postgresql/ (the database itself is made with CREATE DATABASE)\n"
    "\n"
    "  Staff and audit commands take --config FILE (the daemon's configuration: its database\n"
    "    and catalog) or --db FILE|URI [--catalog FILE], before or after the command word.\n"
    "    URI: postgresql://USER@HOST:PORT/DB without a password; the password comes from the\n"
    "    systemd credential database_password, the variable database_password_env (or\n"
    "    --db-password-env NAME) names, else PGPASSWORD or ~/.pgpass.\n"
    "  queue list [--status open|claimed|resolved|dismissed] [--json]\n"
    "  queue show ID [--json]\n"
    "      the conversation, every attempt with raw output and errors, the proposal\n"
    "  queue claim ID --as NAME\n"
    "  queue approve ID --as NAME      send the proposal (checked by the validator again)\n"
    "  queue edit ID --as NAME --action JSON\n"
    "      send this action instead; refused with the validator's errors when invalid\n"
    "  queue reply ID --as NAME --text TEXT | --saved ID\n"
    "  queue dismiss ID --as NAME --note TEXT\n"
    "      exit 0 done, 1 refused (already resolved, held by someone else, invalid action)\n"
    "  queue release ID --as NAME [--note TEXT]      the holder gives the claim back\n"
    "  queue takeover ID --as NAME [--note TEXT]     take over a claim idle past staff.claim_idle_minutes\n"
    "  queue reassign ID --to NAME --as NAME [--note TEXT]\n"
    "      give the claim to an active account (dispatchctl acts as an admin)\n"
    "  queue note ID --as NAME --text TEXT           an internal note, never sent\n"
    "  audit [--message ID] [--since TIME] [--json]\n"
    "      the audit trail in order\n"
    "  audit verify [--archive PATH]\n"
    "      recompute the audit trail's hash chain from its anchor; names the first broken row;\n"
    "      --archive: also the archive file's chain and its link to the live chain\n"
    "  inspect email FILE|- [--gmail-json]\n"
    "      the email as the agent sees it (decoded, quoted history trimmed), as JSON;\n"
    "      --gmail-json: FILE is a Gmail messages.get?format=raw response\n"
    "      exit 0 printed (also with defects), 1 cannot be decoded\n"
    "  trail MESSAGE_ID | --provider-id ID [--markdown | --json]\n"
    "      one message's story: context, attempts, decision, outbox, escalations, staff\n"
    "      actions, audit events and their chain; Markdown by default\n"
    "      exit 0 printed, 1 no such message, 2 usage error\n"
    "  cost [--json]\n"
    "      model tokens billed and their cost per provider and model, with the cached input tokens\n"
    "      and their share of the input; totals of every attempt the database recorded\n"
    "  staff add NAME [--admin] | staff list [--json] | staff admin NAME on|off | staff revoke NAME\n"
    "      named staff accounts for the staff page and API; add prints the token once (first line);\n"
    "      an admin account may reassign claims and manage saved replies\n"
    "  replies list [--json] | replies add NAME --text TEXT | replies edit ID --text TEXT | replies remove ID\n"
    "      saved replies staff pick from ({customer} {escalation} {staff} {channel}; {{ }} for braces)\n"
    "  media get MEDIA_ID -o FILE\n"
    "      a customer's kept file (photo, voice note, document) written to FILE (- for stdout)\n"
    "      exit 0 written, 1 no such file or none kept (its state says why)\n"
    "  templates list [--json]\n"
    "      the WhatsApp message templates dispatchd keeps: name, language, status, category,\n"
    "      parameter format and the parameters of each component (header, body, buttons)\n"
    "  replay --offline --report OUT.md [--catalog NEW] [--since YYYY-MM-DD] [--limit N]\n"
    "         [--sample N [--seed S]] [--json]\n"
    "      judge every recorded model output again against the catalog (NEW, else the config's):\n"
    "      the Markdown report lists the replies whose verdict changes; --json prints it as JSON\n"
    "      on stdout. exit 0 report written, 1 cannot open or write, 2 usage error\n"
    "  replay --online --report OUT.md [--catalog NEW] [--system-prompt FILE] [--llm-model NAME]\n"
    "         [--llm-fallback N] [--concurrency N] [--since YYYY-MM-DD] [--limit N] [--sample N [--seed S]] [--json]\n"
    "      send the recorded messages through the agent loop again in a scratch copy (OUT.md.scratch.db;\n"
    "      nothing is sent to anyone) and report old vs new decisions; run it again to continue\n"
    "      exit 0 complete, 1 failed, 2 usage error, 130 interrupted (Ctrl-C; partial report)\n"
    "  eval SET.jsonl [--catalog NEW] [--system-prompt FILE] [--llm-model NAME] [--llm-fallback N]\n"
    "       [--concurrency N] [--min-accuracy X] [--report OUT.md] [--json]\n"
    "      run a labelled set through the agent loop; accuracy = correct cases / cases\n"
    "      exit 0 at or above X, 1 below X (or cannot run), 2 usage error or bad set (line named),\n"
    "      130 interrupted\n"
    "  erase --counterpart ID_OR_ADDRESS --as NAME [--no-vacuum] | erase --scrub-only\n"
    "      replace a customer's texts, payloads, model outputs, replies, number or address by\n"
    "      tombstones and a salted digest (docs/cli.md: what remains); the audit chain still verifies\n"
    "      exit 0 erased and scrubbed, 1 refused (unfinished messages listed) or not scrubbed\n"
    "  archive [--before YYYY-MM-DD | --older-than-days N] PATH [--batch N] [--pause-ms N] [--json]\n"
    "      move finished messages received before the day (UTC; neither flag: retention.days of\n"
    "      the configuration), with their attempts, actions,\n"
    "      escalations and audit events, into the archive SQLite file PATH (appended to);\n"
    "      safe while dispatchd runs; an interrupted run is finished by the next one\n"
    "      exit 0 done, 1 refused or failed, 2 usage error\n"
    "  migrate-store --from PATH --to postgresql://USER@HOST:PORT/DB [--migrations DIR]\n"
    "      move the SQLite file's rows, ids kept, into an empty PostgreSQL database in one\n"
    "      transaction; both audit chains verified and compared, row counts per table compared.\n"
    "      Stop dispatchd first: a write to the file during the move rolls the target back.\n"
    "      Password: PGPASSWORD. exit 0 moved, 1 refused or failed (target unchanged), 2 usage\n"
    "  mcp list --config FILE [--server NAME] [--json]\n"
    "      start the configured MCP servers, list their tools, which catalog actions bind to\n"
    "      which tool and whether each is pinned (its schema compatible); stop them again\n"
    "      exit 0 all up and pinned, 1 a server down or an action not pinned, 2 usage error\n"
    "  backup PATH\n"
    "      online copy of the SQLite database, safe while dispatchd writes; checked before it is named\n"
    "      PATH. PostgreSQL: refused (exit 1) with the pg_dump command to use instead\n"
    "  --version, --help\n";

struct Command {
  std::string_view name;
  int (*run)(int, char**);
};

constexpr Command k_commands[] = {
    {"validate", dispatchd::cli::cmd_validate},
    {"extract", dispatchd::cli::cmd_extract},
    {"catalog", dispatchd::cli::cmd_catalog},
    {"migrate", dispatchd::cli::cmd_migrate},
    {"audit", dispatchd::cli::cmd_audit},
    {"queue", dispatchd::cli::cmd_queue},
    {"backup", dispatchd::cli::cmd_backup},
    {"inspect", dispatchd::cli::cmd_inspect},
    {"staff", dispatchd::cli::cmd_staff},
    {"replies", dispatchd::cli::cmd_replies},
    {"replay", dispatchd::cli::cmd_replay},
    {"trail", dispatchd::cli::cmd_trail},
    {"eval", dispatchd::cli::cmd_eval},
    {"erase", dispatchd::cli::cmd_erase},
    {"archive", dispatchd::cli::cmd_archive},
    {"migrate-store", dispatchd::cli::cmd_migrate_store},
    {"mcp", dispatchd::cli::cmd_mcp},
    {"cost", dispatchd::cli::cmd_cost},
    {"templates", dispatchd::cli::cmd_templates},
    {"media", dispatchd::cli::cmd_media},
};

// "--config F", "--db F", "--db-password-env N" or "--catalog F" before the command word apply to it: they are moved
// after it, so that `dispatchctl --config F queue list` and `dispatchctl queue list --config F` agree.
std::vector<char*> command_first(int argc, char** argv) {
  std::vector<char*> global;
  int i = 1;
  const auto is_global = [](const char* word) {
    return std::strcmp(word, "--config") == 0 || std::strcmp(word, "--db") == 0 ||
           std::strcmp(word, "--db-password-env") == 0 || std::strcmp(word, "--catalog") == 0;
  };
  while (i + 1 < argc && is_global(argv[i])) {
    global.push_back(argv[i]);
    global.push_back(argv[i + 1]);
    i += 2;
  }
  std::vector<char*> out{argv[0]};
  out.insert(out.end(), argv + i, argv + argc);
  if (out.size() > 1)
    out.insert(out.begin() + 2, global.begin(), global.end());
  else
    out.insert(out.end(), global.begin(), global.end());
  out.push_back(nullptr);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> reordered = command_first(argc, argv);
  argv = reordered.data();
  argc = static_cast<int>(reordered.size()) - 1;
  if (argc < 2) {
    std::fputs(k_usage, stderr);
    return dispatchd::cli::k_exit_usage;
  }
  const std::string_view word = argv[1];
  if (word == "--help" || word == "help") {
    std::fputs(k_usage, stdout);
    return 0;
  }
  if (word == "--version") {
    std::printf("dispatchctl %s\n", DISPATCHD_VERSION);
    return 0;
  }
  for (const auto& command : k_commands) {
    if (command.name == word) return command.run(argc, argv);
  }
  return dispatchd::cli::usage_error("unknown command " + std::string(word) + " (see --help)");
}
