#pragma once

#include "fake_http_request.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace autocomp::test {

// One request the fake LLM server received, with what it decided to answer.
struct RecordedRequest
{
    QByteArray method;
    QString path;
    QString query;
    HttpHeaders headers;
    QByteArray body;
    QJsonObject json; // the body parsed as a JSON object; empty when it was not one
    QString dialect; // wire format that served it, e.g. "openai-chat"; empty for an unknown endpoint
    QString model;
    QString prompt; // text of all messages, joined by newlines
    QString lastUserMessage;
    bool stream = false;
    QString ruleName; // empty when no rule matched
    int responseIndex = -1; // index into the rule's responses; -1 when no rule matched
    int status = 0; // HTTP status the server answers with
    QDateTime receivedAt;
    qint64 receivedNs = 0; // CLOCK_MONOTONIC

    QByteArray header(QByteArrayView name) const { return headerValue(headers, name); }
};

} // namespace autocomp::test
