#include "store/run_archive.h"
#include "model/metric_units.h"
#include "store/run_store.h"

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <cmath>

namespace autocomp {

namespace {

QJsonArray toArray(const QStringList &list)
{
    return QJsonArray::fromStringList(list);
}

QStringList toList(const QJsonValue &value)
{
    QStringList out;
    for (const QJsonValue &v : value.toArray())
        out << v.toString();
    return out;
}

} // namespace

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
    auto line = [&](const QJsonObject &o) { file.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n'); };
    line({{QStringLiteral("type"), QStringLiteral("run")}, {QStringLiteral("id"), run->id}, {QStringLiteral("target"), run->target},
          {QStringLiteral("problem"), run->problem}, {QStringLiteral("agent"), run->agent}, {QStringLiteral("config_yaml"), run->configYaml},
          {QStringLiteral("state"), toString(run->state)}, {QStringLiteral("stop_reason"), run->stopReason}, {QStringLiteral("label"), run->label},
          {QStringLiteral("created_at"), run->createdAt.toString(Qt::ISODateWithMs)}, {QStringLiteral("iteration"), run->iteration},
          {QStringLiteral("metric"), run->metric}, {QStringLiteral("unit"), MetricUnits::declared(run->metric)},
          {QStringLiteral("baseline_score"), run->baselineScore},
          {QStringLiteral("best_score"), run->bestScore}, {QStringLiteral("best_candidate_id"), run->bestCandidateId},
          {QStringLiteral("usd"), run->usd}, {QStringLiteral("tokens_in"), run->tokensIn}, {QStringLiteral("tokens_out"), run->tokensOut},
          {QStringLiteral("llm_calls"), run->llmCalls}, {QStringLiteral("schedule"), toArray(run->schedule)}});
    for (const Candidate &c : store.candidates(runId)) {
        QJsonObject o{{QStringLiteral("type"), QStringLiteral("candidate")}, {QStringLiteral("id"), c.id}, {QStringLiteral("parent_id"), c.parentId},
                      {QStringLiteral("iteration"), c.iteration}, {QStringLiteral("origin"), toString(c.origin)},
                      {QStringLiteral("status"), toString(c.status)}, {QStringLiteral("plan"), c.plan}, {QStringLiteral("menu_item"), c.menuItem},
                      {QStringLiteral("code"), c.code}, {QStringLiteral("metrics"), c.metrics}, {QStringLiteral("feedback"), toArray(c.feedback)},
                      {QStringLiteral("flags"), toArray(c.flags)}, {QStringLiteral("plan_model"), c.planModel},
                      {QStringLiteral("code_model"), c.codeModel}, {QStringLiteral("error"), c.error}, {QStringLiteral("in_beam"), c.inBeam},
                      {QStringLiteral("plan_call_id"), c.planCallId}, {QStringLiteral("plan_slot"), c.planSlot},
                      {QStringLiteral("sample"), c.sample}, {QStringLiteral("fix_of"), c.fixOf}};
        if (c.hasScore())
            o.insert(QStringLiteral("score"), c.score);
        line(o);
        for (const StepResult &s : store.evaluationSteps(c.id))
            line({{QStringLiteral("type"), QStringLiteral("step")}, {QStringLiteral("candidate_id"), c.id}, {QStringLiteral("name"), s.name},
                  {QStringLiteral("command"), toArray(s.command)}, {QStringLiteral("exit_code"), s.exitCode},
                  {QStringLiteral("timed_out"), s.timedOut}, {QStringLiteral("crashed"), s.crashed},
                  {QStringLiteral("duration_ms"), s.durationMs}, {QStringLiteral("log"), s.log}});
    }
    for (const LlmCall &c : store.llmCalls(runId))
        line({{QStringLiteral("type"), QStringLiteral("llm_call")}, {QStringLiteral("id"), c.id}, {QStringLiteral("candidate_id"), c.candidateId},
              {QStringLiteral("phase"), c.phase}, {QStringLiteral("request_hash"), c.requestHash}, {QStringLiteral("provider"), c.provider},
              {QStringLiteral("model"), c.model}, {QStringLiteral("prompt"), c.prompt}, {QStringLiteral("response"), c.response},
              {QStringLiteral("reasoning"), c.reasoning}, {QStringLiteral("tokens_in"), c.tokensIn}, {QStringLiteral("tokens_out"), c.tokensOut},
              {QStringLiteral("usd"), c.usd}, {QStringLiteral("latency_ms"), c.latencyMs}, {QStringLiteral("retries"), c.retries},
              {QStringLiteral("status"), c.status}, {QStringLiteral("error"), c.error},
              {QStringLiteral("created_at"), c.createdAt.toString(Qt::ISODateWithMs)}});
    if (!file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

qint64 importRunJsonl(RunStore &store, const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return 0;
    }
    qint64 runId = 0;
    RunInfo run;
    QHash<qint64, qint64> idMap; // archive candidate id -> new id
    QHash<qint64, qint64> callMap; // archive LLM call id -> new id
    QList<QPair<qint64, qint64>> planLinks; // new candidate id, archive plan call id
    int lineNo = 0;
    while (!file.atEnd()) {
        ++lineNo;
        const QByteArray text = file.readLine().trimmed();
        if (text.isEmpty())
            continue;
        QJsonParseError parseError;
        const QJsonObject o = QJsonDocument::fromJson(text, &parseError).object();
        if (parseError.error != QJsonParseError::NoError) {
            *error = QStringLiteral("%1:%2: invalid JSON: %3").arg(path).arg(lineNo).arg(parseError.errorString());
            if (runId)
                store.deleteRun(runId);
            return 0;
        }
        const QString type = o.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("run")) {
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
            run.baselineScore = o.value(QStringLiteral("baseline_score")).toDouble();
            run.bestScore = o.value(QStringLiteral("best_score")).toDouble();
            run.bestCandidateId = o.value(QStringLiteral("best_candidate_id")).toInteger();
            run.usd = o.value(QStringLiteral("usd")).toDouble();
            run.tokensIn = o.value(QStringLiteral("tokens_in")).toInteger();
            run.tokensOut = o.value(QStringLiteral("tokens_out")).toInteger();
            run.llmCalls = o.value(QStringLiteral("llm_calls")).toInteger();
            run.schedule = toList(o.value(QStringLiteral("schedule")));
            const qint64 best = run.bestCandidateId;
            run.bestCandidateId = 0;
            runId = store.createRun(run);
            run.id = runId;
            run.bestCandidateId = best;
            if (!runId) {
                *error = QStringLiteral("%1:%2: cannot store the run: %3").arg(path).arg(lineNo).arg(store.lastError());
                return 0;
            }
        } else if (!runId) {
            *error = QStringLiteral("%1:%2: expected a \"run\" line first").arg(path).arg(lineNo);
            return 0;
        } else if (type == QLatin1String("candidate")) {
            Candidate c;
            c.runId = runId;
            c.parentId = idMap.value(o.value(QStringLiteral("parent_id")).toInteger(), 0);
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
            c.fixOf = idMap.value(o.value(QStringLiteral("fix_of")).toInteger(), 0);
            const qint64 newId = store.addCandidate(c);
            if (!newId) {
                *error = QStringLiteral("%1:%2: cannot store the candidate: %3").arg(path).arg(lineNo).arg(store.lastError());
                store.deleteRun(runId);
                return 0;
            }
            idMap.insert(o.value(QStringLiteral("id")).toInteger(), newId);
            if (const qint64 planCall = o.value(QStringLiteral("plan_call_id")).toInteger())
                planLinks.append({newId, planCall});
        } else if (type == QLatin1String("step")) {
            EvalResult result;
            StepResult s;
            s.name = o.value(QStringLiteral("name")).toString();
            s.command = toList(o.value(QStringLiteral("command")));
            s.exitCode = o.value(QStringLiteral("exit_code")).toInt();
            s.timedOut = o.value(QStringLiteral("timed_out")).toBool();
            s.crashed = o.value(QStringLiteral("crashed")).toBool();
            s.durationMs = o.value(QStringLiteral("duration_ms")).toDouble();
            s.log = o.value(QStringLiteral("log")).toString();
            result.steps << s;
            store.addEvaluation(idMap.value(o.value(QStringLiteral("candidate_id")).toInteger()), result);
        } else if (type == QLatin1String("llm_call")) {
            LlmCall c;
            c.runId = runId;
            c.candidateId = idMap.value(o.value(QStringLiteral("candidate_id")).toInteger(), 0);
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
            c.status = o.value(QStringLiteral("status")).toString();
            c.error = o.value(QStringLiteral("error")).toString();
            c.createdAt = QDateTime::fromString(o.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
            callMap.insert(o.value(QStringLiteral("id")).toInteger(), store.addLlmCall(c));
        } else {
            *error = QStringLiteral("%1:%2: unknown line type '%3'").arg(path).arg(lineNo).arg(type);
            store.deleteRun(runId);
            return 0;
        }
    }
    if (!runId) {
        *error = QStringLiteral("%1: no run in the file").arg(path);
        return 0;
    }
    for (const auto &[candidateId, archiveCall] : planLinks) {
        if (auto c = store.candidate(candidateId)) {
            c->planCallId = callMap.value(archiveCall, 0);
            store.updateCandidate(*c);
        }
    }
    run.bestCandidateId = idMap.value(run.bestCandidateId, 0);
    store.updateRun(run);
    return runId;
}

} // namespace autocomp
