#pragma once

#include "llm_dialect.h"

namespace autocomp::test {

// Anthropic Messages: POST /v1/messages with anthropic-version; the SSE event sequence message_start,
// content_block_*, message_delta, message_stop with pings; Anthropic error bodies and `event: error`.
class AnthropicMessagesDialect final : public LlmDialect
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
