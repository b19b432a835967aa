#pragma once

#include "llm_dialect.h"

namespace autocomp::test {

// Google Gemini: POST .../models/MODEL:generateContent and :streamGenerateContent?alt=sse (Gemini API and
// Vertex AI paths alike), GET /v1beta/models; each SSE data line is a whole GenerateContentResponse.
class GeminiDialect final : public LlmDialect
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
