#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace autocomp {

// One LLM request and its outcome, as persisted. Never holds credentials.
struct LlmCall {
    qint64 id = 0;
    qint64 runId = 0;
    qint64 candidateId = 0;
    QString phase;       // plan | code | fix | translate | score
    QString requestHash; // sha256 of provider, model, prompt, parameters and sample index
    QString provider;
    QString model;
    QString prompt;
    QString response;
    QString reasoning;   // reasoning text stripped from the response
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
    double latencyMs = 0;
    int retries = 0;
    QString attempts;    // each earlier attempt: why it failed and why it was sent again, one a line
    QString status;      // ok | error
    QString error;
    QDateTime createdAt;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::LlmCall)
