#include "cli_common.h"

#include "catalog/repository.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::cli {

QTextStream &out()
{
    static QTextStream s(stdout);
    return s;
}

QTextStream &err()
{
    static QTextStream s(stderr);
    return s;
}

QString storePath(const Args &args) { return args.option(QStringLiteral("--store"), RunStore::defaultPath()); }

std::unique_ptr<RunStore> openStore(const Args &args, cli::StoreUse use)
{
    // The default store is made on first use; a store named with --store or AUTOCOMP_STORE must exist (except for
    // `run`).
    const bool named = args.options.contains(QStringLiteral("--store"))
        || !qEnvironmentVariableIsEmpty("AUTOCOMP_STORE");
    if (!named && use != cli::StoreUse::Write && !QFileInfo::exists(storePath(args)))
        use = cli::StoreUse::Create;
    return cli::openStore(storePath(args), use, err());
}

QString runUnit(const RunInfo &r) { return r.metricUnit.isEmpty() ? Repository().metricUnitOf(r) : r.metricUnit; }

QJsonObject runJson(const RunInfo &r)
{
    const QString unit = runUnit(r);
    QJsonObject o{{QStringLiteral("run_id"), r.id},
                  {QStringLiteral("target"), r.target},
                  {QStringLiteral("problem"), r.problem},
                  {QStringLiteral("agent"), r.agent},
                  {QStringLiteral("state"), toString(r.state)},
                  {QStringLiteral("stop_reason"), r.stopReason},
                  {QStringLiteral("label"), r.label},
                  {QStringLiteral("created_at"), r.createdAt.toString(Qt::ISODate)},
                  {QStringLiteral("iteration"), r.iteration},
                  {QStringLiteral("metric"), r.metric},
                  {QStringLiteral("best_candidate"), r.bestCandidateId},
                  {QStringLiteral("unit"), unit},
                  {QStringLiteral("baseline_score"), r.baselineScore},
                  {QStringLiteral("best_score"), r.bestScore},
                  {QStringLiteral("speedup"), r.speedup()},
                  {QStringLiteral("llm_calls"), r.llmCalls},
                  {QStringLiteral("tokens_in"), r.tokensIn},
                  {QStringLiteral("tokens_out"), r.tokensOut},
                  {QStringLiteral("usd"), r.usd}};
    // The keys of earlier versions, kept where they are true: only for a metric in milliseconds.
    if (unit == QLatin1String("ms")) {
        o.insert(QStringLiteral("baseline_ms"), r.baselineScore);
        o.insert(QStringLiteral("best_ms"), r.bestScore);
    }
    return o;
}

QJsonObject candidateJson(const Candidate &c, bool full)
{
    QJsonObject o{{QStringLiteral("id"), c.id},
                  {QStringLiteral("parent"), c.parentId},
                  {QStringLiteral("iteration"), c.iteration},
                  {QStringLiteral("origin"), toString(c.origin)},
                  {QStringLiteral("status"), toString(c.status)},
                  {QStringLiteral("status_word"), statusWord(c)},
                  {QStringLiteral("menu_item"), c.menuItem},
                  {QStringLiteral("in_beam"), c.inBeam},
                  {QStringLiteral("plan_model"), c.planModel},
                  {QStringLiteral("code_model"), c.codeModel}};
    if (c.hasScore())
        o.insert(QStringLiteral("score"), c.score);
    if (full) {
        o.insert(QStringLiteral("plan"), c.plan);
        o.insert(QStringLiteral("code"), c.code);
        o.insert(QStringLiteral("metrics"), c.metrics);
        o.insert(QStringLiteral("feedback"), QJsonArray::fromStringList(c.feedback));
        o.insert(QStringLiteral("flags"), QJsonArray::fromStringList(c.flags));
        o.insert(QStringLiteral("error"), c.error);
    }
    return o;
}

void printJson(const QJsonObject &o)
{
    out() << QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented));
    out().flush();
}

} // namespace autocomp::cli
