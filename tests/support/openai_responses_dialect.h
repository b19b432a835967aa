#pragma once

#include "llm_dialect.h"

namespace autocomp::test {

// OpenAI Responses: POST /v1/responses (or /responses under a base URL ending in /v1); typed SSE events
// (response.created, response.output_text.delta, response.completed) and OpenAI error bodies.
class OpenAiResponsesDialect final : public LlmDialect
{
public:
    QString name() const override;
    Endpoint route(const FakeHttpRequest &request) const override;
    bool parseRequest(const FakeHttpRequest &request, const QJsonObject &body, DialectRequest *out,
                      QString *error) const override;
    QByteArray completionBody(const DialectRequest &request, const DialectReply &reply) const override;
    QList<QByteArray> streamEvents(const DialectRequest &request, const DialectReply &reply) const override;
    QByteArray errorBody(int status, const QString &message) const override;
    QByteArray streamErrorEvent(const QString &message) const override;
    QByteArray modelListBody(const QStringList &models) const override;
};

} // namespace autocomp::test
