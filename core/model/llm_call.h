#pragma once

#include <QDateTime>
#include <QHash>
#include <QMetaType>
#include <QString>

namespace autocomp {

// One LLM request and its outcome, as persisted. Never holds credentials.
struct LlmCall
{
    qint64 id = 0;
    qint64 runId = 0;
    qint64 candidateId = 0;
    // plan | code | fix | score (translation score) | isa (ISA selection) | menu (one-shot menu) |
    // examples (example selection) | direct (code without a plan, skip_planning); phaseName() in words
    QString phase;
    QString requestHash; // sha256 of provider, model, prompt, parameters and sample index
    QString provider;
    QString model;
    QString prompt;
    QString response;
    QString reasoning; // reasoning text stripped from the response
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
    double latencyMs = 0;
    int retries = 0;
    QString attempts; // each earlier attempt: why it failed and why it was sent again, one a line
    // What became of the call (written by PaidCallLedger and AgentBuilder; RunStore settles in_flight):
    //   in_flight   recorded before it was sent, no answer yet (usd: the estimated cost);
    //   ok          answered, and paid for (usd: the price table's cost);
    //   error       sent and failed, or refused before sending (prompt or answer over its llm.max_*_bytes limit);
    //   cached      answered by a response already paid for (the store's, or an identical call in flight): usd 0;
    //   unconfirmed was in flight when its process ended or the run was stopped: the provider may have billed it.
    QString status;
    QString error;
    QDateTime createdAt;
};

// What a call's phase served, in words for the views (the phase id itself for one not listed).
inline QString phaseName(const QString &phase)
{
    static const QHash<QString, QString> s_names{
        {QStringLiteral("plan"), QStringLiteral("plan")},
        {QStringLiteral("code"), QStringLiteral("code")},
        {QStringLiteral("fix"), QStringLiteral("fix")},
        {QStringLiteral("score"), QStringLiteral("translation score")},
        {QStringLiteral("isa"), QStringLiteral("ISA selection")},
        {QStringLiteral("menu"), QStringLiteral("one-shot menu")},
        {QStringLiteral("examples"), QStringLiteral("example selection")},
        {QStringLiteral("direct"), QStringLiteral("code without a plan")},
    };
    return s_names.value(phase, phase);
}

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::LlmCall)
