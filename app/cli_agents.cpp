// `autocomp agents build` and `agents import`.
#include "cli_agents_import.h"
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_keys.h"
#include "cli_run_control.h"

#include "agents/agent_builder.h"
#include "catalog/repository.h"
#include "catalog/target_scaffold.h"
#include "llm/llm_client.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QTimer>

namespace autocomp::cli {

int cmdAgentsBuild(const Args &args)
{
    AgentBuildOptions options;
    options.name = args.positional.value(2);
    options.sources = args.lists.value(QStringLiteral("--docs"));
    options.scope = args.option(QStringLiteral("--scope"));
    options.model = args.option(QStringLiteral("--model"));
    options.target = args.option(QStringLiteral("--target"));
    options.overwrite = args.flag(QStringLiteral("--overwrite"));
    if (options.name.isEmpty() || options.model.isEmpty()) {
        err() << "autocomp agents build: give a NAME and --model MODEL\nusage: autocomp agents build NAME --docs "
                 "PATH|URL ... --model MODEL\n";
        return ExitUsage;
    }
    if (args.options.contains(QStringLiteral("--budget"))) {
        bool ok = false;
        options.budgetChars = args.option(QStringLiteral("--budget")).toInt(&ok);
        if (!ok) {
            err() << "autocomp agents build: --budget " << args.option(QStringLiteral("--budget"))
                  << ": not a number of characters\n";
            return ExitUsage;
        }
    }
    // Like `run`, a build makes its store when missing: its answers are kept there for a resumed build.
    auto store = openStore(args, cli::StoreUse::Create);
    if (!store)
        return ExitError;
    QString error;
    const std::optional<ModelSpec> spec = ModelSpec::parse(options.model, &error);
    if (!spec) {
        err() << "autocomp agents build: --model " << options.model << ": " << error << '\n';
        return ExitUsage;
    }
    LlmClient client;
    AgentBuilder builder(options, &client, store.get());
    if (!builder.validate(&error)) {
        err() << "autocomp agents build: " << error << '\n';
        return ExitError;
    }
    QEventLoop loop;
    int code = ExitOk;
    // Ctrl-C or SIGTERM: calls already sent are paid for and their answers are kept in the store, so the next
    // build reuses them instead of paying again: the process waits for them (at most 3 minutes); a second
    // signal leaves at once.
    bool cancelling = false;
    QTimer onTheWay;
    onTheWay.setInterval(200);
    QDeadlineTimer giveUp;
    QObject::connect(&onTheWay, &QTimer::timeout, &loop, [&] {
        if (builder.callsOnTheWay() == 0 || giveUp.hasExpired())
            loop.quit();
    });
    QObject::connect(&builder, &AgentBuilder::failed, &loop, [&](const QString &why) {
        err() << "autocomp agents build: " << why << '\n';
        code = ExitError;
        if (cancelling && builder.callsOnTheWay() > 0)
            return; // the timer quits once they are in
        loop.quit();
    });
    QObject::connect(&builder, &AgentBuilder::planReady, &loop, [&] { loop.quit(); });
    builder.collect();
    if (builder.stage() == AgentBuilder::Stage::Collecting)
        loop.exec();
    if (code != ExitOk)
        return code;
    err() << builder.plan().describe(options.model);
    err().flush();
    if (args.flag(QStringLiteral("--dry-run")))
        return ExitOk;
    client.setApiKeyLookup(loadApiKeys({*spec}, err()));
    QObject::connect(&builder, &AgentBuilder::stageChanged, &loop, [](AgentBuilder::Stage stage, int total) {
        if (stage != AgentBuilder::Stage::Failed && stage != AgentBuilder::Stage::Done)
            err() << "[" << AgentBuilder::stageName(stage) << "] " << total << " step(s)\n";
        err().flush();
    });
    QObject::connect(&builder, &AgentBuilder::logLine, &loop, [](const QString &line) {
        err() << "  " << line << '\n';
        err().flush();
    });
    QObject::connect(&builder, &AgentBuilder::finished, &loop, [&](const QString &dir) {
        out() << dir << '\n';
        if (args.options.contains(QStringLiteral("--scaffold-from"))) {
            const QString targetName = options.target.isEmpty() ? options.name : options.target;
            QString scaffoldError;
            const QString backend = TargetScaffold::create(
                Repository(), targetName, args.option(QStringLiteral("--scaffold-from")), &scaffoldError);
            if (backend.isEmpty()) {
                err() << "autocomp agents build: the target scaffold: " << scaffoldError << '\n';
                code = ExitError;
            } else {
                out() << backend << '\n';
            }
        }
        loop.quit();
    });
    const cli::StopOnSignals stopOnSignals([&](const QString &reason) {
        if (cancelling) {
            err() << "autocomp agents build: " << reason << " again: leaving now; " << builder.callsOnTheWay()
                  << " call(s) still on their way will be paid for again by the next build\n";
            code = cli::RunExitStopped;
            loop.quit();
            return;
        }
        cancelling = true;
        giveUp = QDeadlineTimer(180000);
        builder.cancel();
        if (const int left = builder.callsOnTheWay(); left > 0) {
            err()
                << "autocomp agents build: " << reason << ": waiting for " << left
                << " call(s) already sent (paid for: their answers are kept for the next build); again to leave now\n";
            onTheWay.start();
        }
        err().flush();
    });
    builder.build();
    if (builder.stage() != AgentBuilder::Stage::Failed)
        loop.exec();
    err() << QStringLiteral("LLM calls: %1 sent, %2 answered from the store; $%3\n")
                 .arg(builder.callsSent())
                 .arg(builder.callsReused())
                 .arg(builder.usd(), 0, 'f', 4);
    out().flush();
    return code;
}

int cmdAgentsImport(const Args &args)
{
    if (args.positional.size() != 3) {
        err() << "usage: autocomp agents import DIR [--name NAME] [--target T] [--overwrite]" << Qt::endl;
        return ExitUsage;
    }
    return agentsImport(args.positional.at(2), args.option(QStringLiteral("--name")),
                        args.option(QStringLiteral("--target")), args.flag(QStringLiteral("--overwrite")), out(),
                        err());
}

} // namespace autocomp::cli
