#include "exchange/run_archive.h"
#include "model/code_identity.h"
#include "store/run_store.h"

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QSet>

#include <cmath>

namespace autocomp {

namespace {

QJsonArray toArray(const QStringList &list) { return QJsonArray::fromStringList(list); }

QStringList toList(const QJsonValue &value)
{
    QStringList out;
    for (const QJsonValue &v : value.toArray())
        out << v.toString();
    return out;
}

} // namespace

bool exportSchedule(RunStore &store, qint64 runId, const QString &path, QString *error)
{
    const auto run = store.run(runId);
    if (!run || run->schedule.isEmpty()) {
        if (error)
            *error = run
                ? QStringLiteral("run %1 has no schedule (no improvement along its best trajectory yet)").arg(runId)
                : QStringLiteral("run %1 does not exist").arg(runId);
        return false;
    }
    QString text = QStringLiteral("# Schedule of run %1 (%2/%3): the menu items along its best trajectory, in order.\n"
                                  "# Seed a run with it: search: {schedule: %4}\nsource_run: %1\nschedule:\n")
                       .arg(runId)
                       .arg(run->target, run->problem, path);
    for (const QString &item : run->schedule)
        text += QStringLiteral("  - \"%1\"\n")
                    .arg(QString(item)
                             .replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
                             .replace(QLatin1Char('"'), QStringLiteral("\\\"")));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        if (error)
            *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool exportRunJsonl(RunStore &store, qint64 runId, const QString &path, QString *error)
{
    const auto run = store.run(runId);
    if (!run) {
        *error = QStringLiteral("no run %1 in %2").arg(runId).arg(store.path());
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    qint64 lines = 0;
    qint64 candidates = 0;
    qint64 steps = 0;
    qint64 calls = 0;
    double callUsd = 0;
    auto line = [&](const QJsonObject &o) {
        file.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n');
        ++lines;
    };
    line({{QStringLiteral("type"), QStringLiteral("run")},
          {QStringLiteral("id"), run->id},
          {QStringLiteral("target"), run->target},
          {QStringLiteral("problem"), run->problem},
          {QStringLiteral("agent"), run->agent},
          {QStringLiteral("config_yaml"), run->configYaml},
          {QStringLiteral("state"), toString(run->state)},
          {QStringLiteral("stop_reason"), run->stopReason},
          {QStringLiteral("label"), run->label},
          {QStringLiteral("created_at"), run->createdAt.toString(Qt::ISODateWithMs)},
          {QStringLiteral("iteration"), run->iteration},
          {QStringLiteral("metric"), run->metric},
          {QStringLiteral("unit"), run->metricUnit},
          {QStringLiteral("baseline_score"), run->baselineScore},
          {QStringLiteral("best_score"), run->bestScore},
          {QStringLiteral("best_candidate_id"), run->bestCandidateId},
          {QStringLiteral("usd"), run->usd},
          {QStringLiteral("tokens_in"), run->tokensIn},
          {QStringLiteral("tokens_out"), run->tokensOut},
          {QStringLiteral("llm_calls"), run->llmCalls},
          {QStringLiteral("schedule"), toArray(run->schedule)}});
    for (const Candidate &c : store.candidates(runId)) {
        QJsonObject o{{QStringLiteral("type"), QStringLiteral("candidate")},
                      {QStringLiteral("id"), c.id},
                      {QStringLiteral("parent_id"), c.parentId},
                      {QStringLiteral("iteration"), c.iteration},
                      {QStringLiteral("origin"), toString(c.origin)},
                      {QStringLiteral("status"), toString(c.status)},
                      {QStringLiteral("plan"), c.plan},
                      {QStringLiteral("menu_item"), c.menuItem},
                      {QStringLiteral("code"), c.code},
                      {QStringLiteral("metrics"), c.metrics},
                      {QStringLiteral("feedback"), toArray(c.feedback)},
                      {QStringLiteral("flags"), toArray(c.flags)},
                      {QStringLiteral("plan_model"), c.planModel},
                      {QStringLiteral("code_model"), c.codeModel},
                      {QStringLiteral("error"), c.error},
                      {QStringLiteral("in_beam"), c.inBeam},
                      {QStringLiteral("plan_call_id"), c.planCallId},
                      {QStringLiteral("plan_slot"), c.planSlot},
                      {QStringLiteral("sample"), c.sample},
                      {QStringLiteral("fix_of"), c.fixOf}};
        if (c.hasScore())
            o.insert(QStringLiteral("score"), c.score);
        line(o);
        ++candidates;
        const QList<StepResult> candidateSteps = store.evaluationSteps(c.id);
        steps += candidateSteps.size();
        for (const StepResult &s : candidateSteps) {
            QJsonObject step = s.toJson();
            step.insert(QStringLiteral("type"), QStringLiteral("step"));
            step.insert(QStringLiteral("candidate_id"), c.id);
            line(step);
        }
    }
    for (const LlmCall &c : store.llmCalls(runId)) {
        ++calls;
        callUsd += c.usd;
        line({{QStringLiteral("type"), QStringLiteral("llm_call")},
              {QStringLiteral("id"), c.id},
              {QStringLiteral("candidate_id"), c.candidateId},
              {QStringLiteral("phase"), c.phase},
              {QStringLiteral("request_hash"), c.requestHash},
              {QStringLiteral("provider"), c.provider},
              {QStringLiteral("model"), c.model},
              {QStringLiteral("prompt"), c.prompt},
              {QStringLiteral("response"), c.response},
              {QStringLiteral("reasoning"), c.reasoning},
              {QStringLiteral("tokens_in"), c.tokensIn},
              {QStringLiteral("tokens_out"), c.tokensOut},
              {QStringLiteral("usd"), c.usd},
              {QStringLiteral("latency_ms"), c.latencyMs},
              {QStringLiteral("retries"), c.retries},
              {QStringLiteral("status"), c.status},
              {QStringLiteral("error"), c.error},
              {QStringLiteral("attempts"), c.attempts},
              {QStringLiteral("created_at"), c.createdAt.toString(Qt::ISODateWithMs)}});
    }
    // The trailer: what the file holds, so an import can tell a complete archive from a cut or damaged one.
    file.write(QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("end")},
                                         {QStringLiteral("lines"), lines},
                                         {QStringLiteral("candidates"), candidates},
                                         {QStringLiteral("steps"), steps},
                                         {QStringLiteral("llm_calls"), calls},
                                         {QStringLiteral("llm_usd"), callUsd}})
                   .toJson(QJsonDocument::Compact)
               + '\n');
    if (!file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

namespace {

struct Record
{
    int line = 0;
    QString type;
    QJsonObject o;
};

qint64 idOf(const QJsonObject &o, const char *key) { return o.value(QLatin1String(key)).toInteger(); }

// An archive that cannot be imported: the message names the file and the line.
bool broken(const QString &path, int line, const QString &why, QString *error)
{
    *error = QStringLiteral("%1:%2: %3; nothing was imported").arg(path).arg(line).arg(why);
    return false;
}

// Reads the file's lines as records, the end record apart; false when a line is not one of ours or the file has no
// run or no end record.
bool readRecords(QFile &file, const QString &path, QList<Record> *records, std::optional<Record> *trailer,
                 QString *error)
{
    int lineNo = 0;
    while (!file.atEnd()) {
        ++lineNo;
        const QByteArray text = file.readLine().trimmed();
        if (text.isEmpty())
            continue;
        if (*trailer)
            return broken(path, lineNo, QStringLiteral("data after the end record"), error);
        QJsonParseError parseError;
        const QJsonDocument doc = QJsonDocument::fromJson(text, &parseError);
        if (parseError.error != QJsonParseError::NoError || !doc.isObject())
            return broken(path, lineNo,
                          QStringLiteral("invalid JSON (%1): the file is truncated or corrupt")
                              .arg(parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                                                : QStringLiteral("not an object")),
                          error);
        Record r{lineNo, doc.object().value(QStringLiteral("type")).toString(), doc.object()};
        if (records->isEmpty() && r.type != QLatin1String("run"))
            return broken(path, lineNo, QStringLiteral("expected a \"run\" line first"), error);
        if (r.type == QLatin1String("end")) {
            *trailer = r;
            continue;
        }
        if (r.type == QLatin1String("run") && !records->isEmpty())
            return broken(path, lineNo, QStringLiteral("a second \"run\" line"), error);
        if (r.type != QLatin1String("run") && r.type != QLatin1String("candidate") && r.type != QLatin1String("step")
            && r.type != QLatin1String("llm_call"))
            return broken(path, lineNo, QStringLiteral("unknown line type '%1'").arg(r.type), error);
        *records << r;
    }
    if (records->isEmpty()) {
        *error = QStringLiteral("%1: no run in the file; nothing was imported").arg(path);
        return false;
    }
    if (!*trailer)
        return broken(path, lineNo,
                      QStringLiteral("the file ends without its end record after %1 records: it is truncated "
                                     "(or was written by an older version; export it again)")
                          .arg(records->size()),
                      error);
    return true;
}

// The records' references (parents, repairs, plan calls, the best candidate) point into the file, and the end
// record's counts match what the file holds.
bool checkRecords(const QList<Record> &records, const Record &trailer, const QString &path, QString *error)
{
    QSet<qint64> candidateIds;
    QSet<qint64> callIds;
    qint64 candidates = 0, steps = 0, calls = 0;
    double callUsd = 0;
    for (const Record &r : records) {
        if (r.type == QLatin1String("candidate")) {
            const qint64 id = idOf(r.o, "id");
            if (id <= 0 || candidateIds.contains(id))
                return broken(path, r.line, QStringLiteral("candidate id %1 is missing or repeated").arg(id), error);
            for (const char *key : {"parent_id", "fix_of"})
                if (const qint64 ref = idOf(r.o, key); ref && !candidateIds.contains(ref))
                    return broken(path, r.line,
                                  QStringLiteral("candidate %1: %2 %3 is not an earlier candidate of the file")
                                      .arg(id)
                                      .arg(QLatin1String(key))
                                      .arg(ref),
                                  error);
            candidateIds.insert(id);
            ++candidates;
        } else if (r.type == QLatin1String("step")) {
            if (!candidateIds.contains(idOf(r.o, "candidate_id")))
                return broken(path, r.line,
                              QStringLiteral("an evaluation step of candidate %1, which the file does not hold")
                                  .arg(idOf(r.o, "candidate_id")),
                              error);
            ++steps;
        } else if (r.type == QLatin1String("llm_call")) {
            const qint64 id = idOf(r.o, "id");
            if (id <= 0 || callIds.contains(id))
                return broken(path, r.line, QStringLiteral("LLM call id %1 is missing or repeated").arg(id), error);
            if (const qint64 c = idOf(r.o, "candidate_id"); c && !candidateIds.contains(c))
                return broken(
                    path, r.line,
                    QStringLiteral("LLM call %1 names candidate %2, which the file does not hold").arg(id).arg(c),
                    error);
            callIds.insert(id);
            ++calls;
            callUsd += r.o.value(QStringLiteral("usd")).toDouble();
        }
    }
    for (const Record &r : records)
        if (r.type == QLatin1String("candidate"))
            if (const qint64 call = idOf(r.o, "plan_call_id"); call && !callIds.contains(call))
                return broken(
                    path, r.line,
                    QStringLiteral("candidate %1's plan call %2 is not in the file").arg(idOf(r.o, "id")).arg(call),
                    error);
    if (const qint64 best = idOf(records.first().o, "best_candidate_id"); best && !candidateIds.contains(best))
        return broken(path, records.first().line, QStringLiteral("the best candidate %1 is not in the file").arg(best),
                      error);
    const QJsonObject &t = trailer.o;
    if (idOf(t, "lines") != records.size() || idOf(t, "candidates") != candidates || idOf(t, "steps") != steps
        || idOf(t, "llm_calls") != calls
        || std::abs(t.value(QStringLiteral("llm_usd")).toDouble() - callUsd) > 1e-6 * qMax(1.0, callUsd))
        return broken(
            path, trailer.line,
            QStringLiteral("the end record counts %1 lines, %2 candidates, %3 steps, %4 LLM calls ($%5) but the file "
                           "holds %6, %7, %8, %9 ($%10): it is damaged")
                .arg(idOf(t, "lines"))
                .arg(idOf(t, "candidates"))
                .arg(idOf(t, "steps"))
                .arg(idOf(t, "llm_calls"))
                .arg(t.value(QStringLiteral("llm_usd")).toDouble())
                .arg(records.size())
                .arg(candidates)
                .arg(steps)
                .arg(calls)
                .arg(callUsd),
            error);
    return true;
}

RunInfo runFromJson(const QJsonObject &o)
{
    RunInfo run;
    run.target = o.value(QStringLiteral("target")).toString();
    run.problem = o.value(QStringLiteral("problem")).toString();
    run.agent = o.value(QStringLiteral("agent")).toString();
    run.configYaml = o.value(QStringLiteral("config_yaml")).toString();
    run.state = runStateFromString(o.value(QStringLiteral("state")).toString());
    run.stopReason = o.value(QStringLiteral("stop_reason")).toString();
    run.label = o.value(QStringLiteral("label")).toString();
    run.createdAt = QDateTime::fromString(o.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    run.iteration = o.value(QStringLiteral("iteration")).toInt();
    run.metric = o.value(QStringLiteral("metric")).toString();
    run.metricUnit = o.value(QStringLiteral("unit")).toString();
    run.baselineScore = o.value(QStringLiteral("baseline_score")).toDouble();
    run.bestScore = o.value(QStringLiteral("best_score")).toDouble();
    run.usd = o.value(QStringLiteral("usd")).toDouble();
    run.tokensIn = o.value(QStringLiteral("tokens_in")).toInteger();
    run.tokensOut = o.value(QStringLiteral("tokens_out")).toInteger();
    run.llmCalls = o.value(QStringLiteral("llm_calls")).toInteger();
    run.schedule = toList(o.value(QStringLiteral("schedule")));
    // An imported run is browsed, not driven: a run exported while running is imported as stopped.
    if (run.state == RunState::Running || run.state == RunState::Created)
        run.state = RunState::Stopped;
    return run;
}

// A candidate of run `runId`; idMap maps the archive's candidate ids to the new ones.
Candidate candidateFromJson(const QJsonObject &o, qint64 runId, const QHash<qint64, qint64> &idMap)
{
    Candidate c;
    c.runId = runId;
    c.parentId = idMap.value(idOf(o, "parent_id"), 0);
    c.iteration = o.value(QStringLiteral("iteration")).toInt();
    c.origin = candidateOriginFromString(o.value(QStringLiteral("origin")).toString());
    c.status = candidateStatusFromString(o.value(QStringLiteral("status")).toString());
    c.plan = o.value(QStringLiteral("plan")).toString();
    c.menuItem = o.value(QStringLiteral("menu_item")).toString();
    c.code = o.value(QStringLiteral("code")).toString();
    if (o.contains(QStringLiteral("score")))
        c.score = o.value(QStringLiteral("score")).toDouble();
    c.metrics = o.value(QStringLiteral("metrics")).toObject();
    c.feedback = toList(o.value(QStringLiteral("feedback")));
    c.flags = toList(o.value(QStringLiteral("flags")));
    c.planModel = o.value(QStringLiteral("plan_model")).toString();
    c.codeModel = o.value(QStringLiteral("code_model")).toString();
    c.error = o.value(QStringLiteral("error")).toString();
    c.inBeam = o.value(QStringLiteral("in_beam")).toBool();
    c.planSlot = o.value(QStringLiteral("plan_slot")).toInt(-1);
    c.sample = o.value(QStringLiteral("sample")).toInt();
    c.fixOf = idMap.value(idOf(o, "fix_of"), 0);
    return c;
}

// An LLM call of run `runId`; one the archive has in flight is unconfirmed (its process is not this one).
LlmCall callFromJson(const QJsonObject &o, qint64 runId, const QHash<qint64, qint64> &idMap)
{
    LlmCall c;
    c.runId = runId;
    c.candidateId = idMap.value(idOf(o, "candidate_id"), 0);
    c.phase = o.value(QStringLiteral("phase")).toString();
    c.requestHash = o.value(QStringLiteral("request_hash")).toString();
    c.provider = o.value(QStringLiteral("provider")).toString();
    c.model = o.value(QStringLiteral("model")).toString();
    c.prompt = o.value(QStringLiteral("prompt")).toString();
    c.response = o.value(QStringLiteral("response")).toString();
    c.reasoning = o.value(QStringLiteral("reasoning")).toString();
    c.tokensIn = o.value(QStringLiteral("tokens_in")).toInteger();
    c.tokensOut = o.value(QStringLiteral("tokens_out")).toInteger();
    c.usd = o.value(QStringLiteral("usd")).toDouble();
    c.latencyMs = o.value(QStringLiteral("latency_ms")).toDouble();
    c.retries = o.value(QStringLiteral("retries")).toInt();
    c.attempts = o.value(QStringLiteral("attempts")).toString();
    c.status = o.value(QStringLiteral("status")).toString();
    if (c.status == QLatin1String("in_flight"))
        c.status = QStringLiteral("unconfirmed");
    c.error = o.value(QStringLiteral("error")).toString();
    c.createdAt = QDateTime::fromString(o.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    return c;
}

// Stores checked records in one transaction: the run appears whole or not at all (a killed import leaves nothing).
qint64 storeRecords(RunStore &store, const QList<Record> &records, const QString &path, QString *error)
{
    if (!store.beginBatch()) {
        store.endBatch(false);
        *error = QStringLiteral("%1: cannot import: %2").arg(path, store.lastError());
        return 0;
    }
    auto abandon = [&](int line, const QString &what) {
        *error = QStringLiteral("%1:%2: cannot store %3: %4; nothing was imported")
                     .arg(path)
                     .arg(line)
                     .arg(what, store.lastError());
        store.endBatch(false);
        return qint64(0);
    };
    qint64 runId = 0;
    RunInfo run;
    QHash<qint64, qint64> idMap; // archive candidate id -> new id
    QHash<qint64, qint64> callMap; // archive LLM call id -> new id
    QList<QPair<qint64, qint64>> planLinks; // new candidate id, archive plan call id
    for (const Record &r : records) {
        const QJsonObject &o = r.o;
        if (r.type == QLatin1String("run")) {
            run = runFromJson(o);
            runId = store.createRun(run);
            run.id = runId;
            if (!runId)
                return abandon(r.line, QStringLiteral("the run"));
        } else if (r.type == QLatin1String("candidate")) {
            const qint64 newId = store.addCandidate(candidateFromJson(o, runId, idMap));
            if (!newId)
                return abandon(r.line, QStringLiteral("candidate %1").arg(idOf(o, "id")));
            idMap.insert(idOf(o, "id"), newId);
            if (const qint64 planCall = idOf(o, "plan_call_id"))
                planLinks.append({newId, planCall});
        } else if (r.type == QLatin1String("step")) {
            EvalResult result;
            result.steps << StepResult::fromJson(o);
            if (!store.addEvaluation(idMap.value(idOf(o, "candidate_id")), result))
                return abandon(r.line, QStringLiteral("an evaluation step"));
        } else if (r.type == QLatin1String("llm_call")) {
            const qint64 newId = store.addLlmCall(callFromJson(o, runId, idMap));
            if (!newId)
                return abandon(r.line, QStringLiteral("LLM call %1").arg(idOf(o, "id")));
            callMap.insert(idOf(o, "id"), newId);
        }
    }
    for (const auto &[candidateId, archiveCall] : planLinks) {
        auto c = store.candidate(candidateId);
        if (!c)
            return abandon(records.first().line, QStringLiteral("a plan link"));
        c->planCallId = callMap.value(archiveCall, 0);
        if (!store.updateCandidate(*c))
            return abandon(records.first().line, QStringLiteral("candidate %1's plan link").arg(candidateId));
    }
    // Steps that changed nothing (the same code as an earlier candidate) say so, in archives written before
    // the engine marked them.
    for (const Candidate &c : flagIdenticalCode(store.candidates(runId)))
        if (!store.updateCandidate(c))
            return abandon(records.first().line, QStringLiteral("candidate %1's duplicate mark").arg(c.id));
    run.bestCandidateId = idMap.value(idOf(records.first().o, "best_candidate_id"), 0);
    if (!store.updateRun(run))
        return abandon(records.first().line, QStringLiteral("the run's totals"));
    if (!store.endBatch(true)) {
        *error = QStringLiteral("%1: cannot import: %2; nothing was imported").arg(path, store.lastError());
        return 0;
    }
    return runId;
}

} // namespace

qint64 importRunJsonl(RunStore &store, const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return 0;
    }
    // First the whole file is read and checked: the records, their references and the trailer's counts.
    QList<Record> records;
    std::optional<Record> trailer;
    if (!readRecords(file, path, &records, &trailer, error) || !checkRecords(records, *trailer, path, error))
        return 0;
    return storeRecords(store, records, path, error);
}

} // namespace autocomp
