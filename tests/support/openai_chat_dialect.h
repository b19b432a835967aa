#pragma once

#include "llm_dialect.h"

namespace autocomp::test {

// OpenAI Chat Completions: POST /v1/chat/completions (or /chat/completions under a base URL ending in /v1),
// GET /v1/models, OpenAI error bodies, SSE chunks ending in `data: [DONE]`.
class OpenAiChatDialect final : public LlmDialect
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
