// LlmClient and ModelSpec against the loopback fake LLM server: what a run sees when a provider answers,
// streams, rate-limits, fails or drops the connection.
#include "llm/llm_client.h"
#include "llm/model_spec.h"

#include "fake_llm_server.h"
#include "tinyproxy.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QHostInfo>
#include <QLocale>
#include <QProcess>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <algorithm>
#include <memory>
#include <vector>

using namespace Qt::StringLiterals;
using namespace autocomp;
using autocomp::test::FakeLlmServer;
using autocomp::test::RecordedRequest;

namespace {

constexpr int Timeout = 20000;

} // namespace

class TestLlmClient : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void text_data();
    void text();
    void reasoningIsStripped_data();
    void reasoningIsStripped();
    void sendsKeyAndParameters();
    void retriesAfter429();
    void serverErrorRetriedThenFails();
    void badRequestNotRetried();
    void resetMidStreamIsRetried_data();
    void resetMidStreamIsRetried();
    void closedBeforeAnswerIsNotResent();
    void unreachableIsRetried();
    void oversizedAnswerIsCut_data();
    void oversizedAnswerIsCut();
    void runawayStreamLeavesOthersAlone();
    void redirectWithinTheOrigin();
    void gzipAndUserAgent();
    void ipv6Loopback();
    void proxy_data();
    void proxy();
    void perProviderConcurrencyLimit();
    void queuedRequestsTakeTurnsAcrossOwners();
    void malformedStreamIsRetried();
    void abortInFlight();
    void abortQueuedIsPrompt();
    void totalTimeoutIsNotRetried();
    void requestHash();
    void stripReasoning_data();
    void stripReasoning();

    void modelSpecParse_data();
    void modelSpecParse();
    void modelSpecVllmUsesEnvironment();
    void backoffSeconds_data();
    void backoffSeconds();
    void backoffHonoursHttpDate();
    void retryableStatus_data();
    void retryableStatus();

private:
    bool loadScript(const QByteArray &yaml);
    LlmRequest request(const QString &prompt, bool stream = true) const;
    bool waitFor(LlmReply *reply);

    std::unique_ptr<FakeLlmServer> m_server;
    std::unique_ptr<LlmClient> m_client;
};

void TestLlmClient::initTestCase()
{
    // The defaults of ModelSpec depend on these; a developer's shell must not change the results.
    for (const char *name : {"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "VLLM_API_BASE", "OPENAI_API_KEY"})
        qunsetenv(name);
}

void TestLlmClient::init()
{
    m_server = std::make_unique<FakeLlmServer>();
    QVERIFY2(m_server->listen(), qPrintable(m_server->errorString()));
    m_client = std::make_unique<LlmClient>();
    m_client->setApiKeyLookup([](const QString &) { return QString(); });
}

void TestLlmClient::cleanup()
{
    m_client.reset();
    m_server.reset();
}

bool TestLlmClient::loadScript(const QByteArray &yaml)
{
    QString error;
    if (!m_server->loadScriptText(yaml, QString(), &error)) {
        qWarning().noquote() << "script error:" << error;
        return false;
    }
    return true;
}

LlmRequest TestLlmClient::request(const QString &prompt, bool stream) const
{
    QString error;
    const auto spec = ModelSpec::parse(u"vllm@"_s + m_server->baseUrl().toString() + u"/v1::m"_s, &error);
    if (!spec)
        qFatal("cannot parse the fake server's model spec: %s", qPrintable(error));
    LlmRequest r;
    r.spec = *spec;
    r.system = u"You are a kernel engineer."_s;
    r.prompt = prompt;
    r.stream = stream;
    return r;
}

bool TestLlmClient::waitFor(LlmReply *reply)
{
    QSignalSpy spy(reply, &LlmReply::finished);
    if (!reply->isFinished() && !spy.wait(Timeout))
        return false;
    return reply->isFinished();
}

void TestLlmClient::text_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("streaming") << true;
    QTest::newRow("non-streaming") << false;
}

void TestLlmClient::text()
{
    QFETCH(bool, stream);
    const QString content =
        u"Chosen optimization: 1. Tile\n\n```cpp\nint main() { return 0; }\n```\nUnicode: \u00b5s \u2192 fast"_s;
    QVERIFY(loadScript("rules:\n  - responses:\n      - content: |\n"
                       + QByteArray("          " + content.toUtf8()).replace("\n", "\n          ")
                       + "\n        usage: {prompt_tokens: 321, completion_tokens: 45}\n"));

    LlmReply *reply = m_client->send(request(u"Plan something"_s, stream));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.text, content);
    QVERIFY(r.reasoning.isEmpty());
    QCOMPARE(r.tokensIn, qint64(321));
    QCOMPARE(r.tokensOut, qint64(45));
    QCOMPARE(r.retries, 0);
    QCOMPARE(r.httpStatus, 200);
    QVERIFY(r.latencyMs > 0);
    QVERIFY(!r.fromCache);

    QCOMPARE(m_server->requestCount(), 1);
    const auto recorded = m_server->requests().first();
    QCOMPARE(recorded.path, u"/v1/chat/completions"_s);
    QCOMPARE(recorded.model, u"m"_s);
    QCOMPARE(recorded.stream, stream);
    QCOMPARE(recorded.lastUserMessage, u"Plan something"_s);
    QVERIFY(recorded.prompt.contains(u"You are a kernel engineer."_s));
    reply->deleteLater();
}

void TestLlmClient::reasoningIsStripped_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("streaming") << true;
    QTest::newRow("non-streaming") << false;
}

void TestLlmClient::reasoningIsStripped()
{
    QFETCH(bool, stream);
    QVERIFY(loadScript(
        "rules:\n  - responses:\n      - content: \"<think>\\nThe loop is memory bound.\\n</think>\\n\\nChosen "
        "optimization: 2. Register blocking\"\n"));
    LlmReply *reply = m_client->send(request(u"p"_s, stream));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.text, u"Chosen optimization: 2. Register blocking"_s);
    QCOMPARE(r.reasoning, u"The loop is memory bound."_s);
    reply->deleteLater();
}

void TestLlmClient::sendsKeyAndParameters()
{
    QVERIFY(loadScript("rules:\n  - responses: [{content: ok}]\n"));
    m_client->setApiKeyLookup(
        [](const QString &provider) { return provider == u"vllm"_s ? u"sk-test-123"_s : QString(); });
    LlmRequest r = request(u"p"_s);
    r.temperature = 0.25;
    r.maxTokens = 777;
    LlmReply *reply = m_client->send(r);
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    const auto recorded = m_server->requests().first();
    QCOMPARE(recorded.header("authorization"), QByteArray("Bearer sk-test-123"));
    QCOMPARE(recorded.json.value(u"max_tokens"_s).toInt(), 777);
    QCOMPARE(recorded.json.value(u"temperature"_s).toDouble(), 0.25);
    reply->deleteLater();
}

void TestLlmClient::retriesAfter429()
{
    QVERIFY(loadScript(
        "rules:\n  - responses:\n"
        "      - {status: 429, error_message: \"Rate limit reached for requests\", headers: {retry-after: \"0\"}}\n"
        "      - {content: \"after the limit\"}\n"));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(r.text, u"after the limit"_s);
    QCOMPARE(r.retries, 1);
    QCOMPARE(m_server->requestCount(), 2);
    QCOMPARE(m_server->requests().at(0).status, 429);
    QCOMPARE(m_server->requests().at(1).status, 200);
    reply->deleteLater();
}

void TestLlmClient::serverErrorRetriedThenFails()
{
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses:\n"
                       "      - {status: 500, error_message: \"The engine is currently overloaded (fake)\", "
                       "headers: {retry-after-ms: \"10\"}}\n"));
    m_client->setMaxRetries(2);
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY(!r.ok);
    QCOMPARE(r.retries, 2);
    QCOMPARE(r.httpStatus, 500);
    QVERIFY2(r.error.contains(u"The engine is currently overloaded (fake)"_s), qPrintable(r.error));
    QCOMPARE(m_server->requestCount(), 3);
    // Nothing more is sent once the reply has failed.
    QTest::qWait(200);
    QCOMPARE(m_server->requestCount(), 3);
    QCOMPARE(m_client->inFlight(), 0);
    reply->deleteLater();
}

void TestLlmClient::badRequestNotRetried()
{
    QVERIFY(
        loadScript("rules:\n  - cycle: true\n    responses:\n"
                   "      - {status: 400, error_message: \"This model's maximum context length is 8192 tokens\"}\n"));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY(!r.ok);
    QCOMPARE(r.retries, 0);
    QCOMPARE(r.httpStatus, 400);
    QVERIFY2(r.error.contains(u"maximum context length"_s), qPrintable(r.error));
    QTest::qWait(200);
    QCOMPARE(m_server->requestCount(), 1);
    reply->deleteLater();
}

void TestLlmClient::resetMidStreamIsRetried_data()
{
    QTest::addColumn<bool>("stream");
    QTest::addColumn<bool>("resendBilled");
    QTest::newRow("streaming, not resent") << true << false;
    QTest::newRow("non-streaming, not resent") << false << false;
    QTest::newRow("streaming, resend_billed") << true << true;
    QTest::newRow("non-streaming, resend_billed") << false << true;
}

void TestLlmClient::resetMidStreamIsRetried()
{
    // A connection that breaks while the answer arrives: the provider has produced (and billed) it, so
    // it is sent again only with llm.resend_billed, and that second attempt is on record.
    QFETCH(bool, stream);
    QFETCH(bool, resendBilled);
    QVERIFY(loadScript("rules:\n  - responses:\n"
                       "      - {content: \"a long answer that will be cut off somewhere in the middle of the text\", "
                       "fault: reset_mid_stream}\n"
                       "      - {content: \"the complete answer\"}\n"));
    m_client->setResendBilled(resendBilled);
    LlmReply *reply = m_client->send(request(u"p"_s, stream));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    if (!resendBilled) {
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(u"may have billed"_s), qPrintable(r.error));
        QVERIFY(r.text.isEmpty());
        QCOMPARE(r.retries, 0);
        QCOMPARE(m_server->requestCount(), 1);
    } else {
        QVERIFY2(r.ok, qPrintable(r.error));
        // Nothing of the broken attempt leaks into the answer.
        QCOMPARE(r.text, u"the complete answer"_s);
        QCOMPARE(r.retries, 1);
        QCOMPARE(r.attempts.size(), 1);
        QVERIFY2(r.attempts.first().contains(u"resend_billed"_s), qPrintable(r.attempts.first()));
        QCOMPARE(m_server->requestCount(), 2);
    }
    reply->deleteLater();
}

void TestLlmClient::closedBeforeAnswerIsNotResent()
{
    // The server reads the whole request and closes without a byte of answer. Qt would send a request
    // again by itself here; the provider may be working on it, so the client must not.
    QVERIFY(loadScript("rules:\n  - responses:\n"
                       "      - {content: \"never sent\", fault: close_before_answer}\n"
                       "      - {content: \"the second answer\"}\n"));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"may have billed"_s), qPrintable(reply->response().error));
    QTest::qWait(200);
    QCOMPARE(m_server->requestCount(), 1);
    reply->deleteLater();
}

void TestLlmClient::unreachableIsRetried()
{
    // Nothing of the request can have reached anybody: sent again after backoff, each attempt on record.
    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost));
    const quint16 port = closed.serverPort();
    closed.close();
    QString error;
    LlmRequest r = request(u"p"_s);
    r.spec = *ModelSpec::parse(u"vllm@http://127.0.0.1:%1/v1::m"_s.arg(port), &error);
    m_client->setMaxRetries(2);
    LlmReply *reply = m_client->send(r);
    QVERIFY(waitFor(reply));
    QVERIFY(!reply->response().ok);
    QCOMPARE(reply->response().retries, 2);
    QCOMPARE(reply->response().attempts.size(), 2);
    QVERIFY2(reply->response().attempts.first().contains(u"nothing had reached the provider"_s),
             qPrintable(reply->response().attempts.first()));
    QVERIFY2(reply->response().error.contains(u"refused"_s, Qt::CaseInsensitive), qPrintable(reply->response().error));
    reply->deleteLater();
}

void TestLlmClient::oversizedAnswerIsCut_data()
{
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QByteArray>("response");
    QTest::newRow("endless stream") << true << QByteArray("{content: \"grow grow grow grow\", fault: endless}");
    QTest::newRow("endless body") << false << QByteArray("{content: \"grow grow grow grow\", fault: endless}");
    QTest::newRow("huge streamed answer")
        << true << QByteArray("{content: \"" + QByteArray("0123456789").repeated(30000) + "\"}");
    QTest::newRow("huge body") << false
                               << QByteArray("{content: \"" + QByteArray("0123456789").repeated(30000) + "\"}");
}

void TestLlmClient::oversizedAnswerIsCut()
{
    QFETCH(bool, stream);
    QFETCH(QByteArray, response);
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses:\n      - " + response + "\n"));
    m_client->setMaxAnswerBytes(100000);
    m_client->setMaxBodyBytes(1 << 20);
    LlmReply *reply = m_client->send(request(u"p"_s, stream));
    QVERIFY(waitFor(reply));
    const LlmResponse &r = reply->response();
    QVERIFY(!r.ok);
    QVERIFY(r.text.isEmpty());
    QVERIFY2(r.error.contains(u"cut off"_s) || r.error.contains(u"exceeded"_s), qPrintable(r.error));
    QVERIFY(r.partial.isEmpty());
    QCOMPARE(m_server->requestCount(), 1); // never sent again: it would grow the same way
    QCOMPARE(m_client->inFlight(), 0);
    reply->deleteLater();
}

// An answer that streams faster than Qt parses it (here: endless, 64 KiB a turn of the server's loop) must not
// hold the HTTP thread that the other requests to the same origin share: the steady answer beside it arrives
// whole, and the runaway one is cut at the limit. The server runs in a thread of its own here, as a provider
// does: in the test's thread it could only write while the client is idle, and never outrun it.
void TestLlmClient::runawayStreamLeavesOthersAlone()
{
    QThread serverThread;
    serverThread.start();
    QObject inServerThread; // the server and its sockets are made in that thread, and live there
    inServerThread.moveToThread(&serverThread);
    FakeLlmServer *server = nullptr;
    const auto stopServer = qScopeGuard([&] {
        QMetaObject::invokeMethod(
            &inServerThread, [&] { delete server; }, Qt::BlockingQueuedConnection);
        serverThread.quit();
        serverThread.wait();
    });
    bool listening = false;
    QString scriptError;
    QUrl base;
    QMetaObject::invokeMethod(
        &inServerThread,
        [&] {
            server = new FakeLlmServer;
            listening = server->listen()
                && server->loadScriptText(
                    "rules:\n"
                    "  - match: 'runaway'\n    cycle: true\n    responses:\n"
                    "      - {content: \"grow grow grow grow\", fault: endless}\n"
                    "  - match: 'steady'\n    cycle: true\n    responses:\n"
                    "      - {content: \"a steady answer in several pieces\", fault: drip, chunk_delay_ms: 40}\n",
                    QString(), &scriptError);
            base = server->baseUrl();
        },
        Qt::BlockingQueuedConnection);
    QVERIFY2(listening, qPrintable(scriptError));
    const auto requestTo = [&](const QString &prompt) {
        QString error;
        const auto spec = ModelSpec::parse(u"vllm@"_s + base.toString() + u"/v1::m"_s, &error);
        LlmRequest r;
        r.spec = *spec;
        r.prompt = prompt;
        r.stream = true;
        return r;
    };
    const auto requestsSeen = [&] {
        int n = 0;
        QMetaObject::invokeMethod(
            server, [&] { n = server->requestCount(); }, Qt::BlockingQueuedConnection);
        return n;
    };
    m_client->setMaxAnswerBytes(200000);
    m_client->setMaxBodyBytes(64 << 20);
    LlmReply *runaway = m_client->send(requestTo(u"runaway"_s));
    QTRY_VERIFY_WITH_TIMEOUT(requestsSeen() == 1, Timeout); // the runaway answer is flowing first
    LlmReply *steady = m_client->send(requestTo(u"steady"_s));
    QVERIFY(waitFor(steady));
    QVERIFY2(steady->response().ok, qPrintable(steady->response().error));
    QCOMPARE(steady->response().text, u"a steady answer in several pieces"_s);
    QVERIFY(waitFor(runaway));
    QVERIFY(!runaway->response().ok);
    QVERIFY2(runaway->response().error.contains(u"cut off"_s), qPrintable(runaway->response().error));
    QCOMPARE(requestsSeen(), 2);
    QCOMPARE(m_client->inFlight(), 0);
    delete runaway;
    delete steady;
}

void TestLlmClient::redirectWithinTheOrigin()
{
    const QByteArray location = "/v1/chat/completions?redirected=1";
    QVERIFY(loadScript("rules:\n  - responses:\n"
                       "      - {status: 307, error_message: moved, headers: {location: \""
                       + location
                       + "\"}}\n"
                         "      - {content: \"after the redirect\"}\n"));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    QCOMPARE(reply->response().text, u"after the redirect"_s);
    QCOMPARE(m_server->requestCount(), 2);
    QCOMPARE(m_server->requests().at(1).query, u"redirected=1"_s);
    QCOMPARE(m_server->requests().at(1).method, QByteArray("POST"));
    QCOMPARE(m_server->requests().at(1).body, m_server->requests().at(0).body);
    reply->deleteLater();

    // To another origin: not followed (the key was meant for this one).
    QVERIFY(loadScript("rules:\n  - responses:\n"
                       "      - {status: 307, error_message: moved, headers: {location: "
                       "\"http://203.0.113.9/v1/chat/completions\"}}\n"));
    reply = m_client->send(request(u"q"_s));
    QVERIFY(waitFor(reply));
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"another origin"_s), qPrintable(reply->response().error));
    reply->deleteLater();
}

void TestLlmClient::gzipAndUserAgent()
{
    QVERIFY(loadScript("rules:\n  - responses:\n      - {content: \"squeezed and unsqueezed\", gzip: true}\n"));
    LlmReply *reply = m_client->send(request(u"p"_s, false));
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    QCOMPARE(reply->response().text, u"squeezed and unsqueezed"_s);
    QCOMPARE(m_server->requestCount(), 1);
    const RecordedRequest &recorded = m_server->requests().at(0);
    QVERIFY2(recorded.header("user-agent").startsWith("autocomp-workbench/"),
             recorded.header("user-agent").constData());
    QVERIFY2(recorded.header("accept-encoding").contains("gzip"), recorded.header("accept-encoding").constData());
    reply->deleteLater();
}

void TestLlmClient::ipv6Loopback()
{
    FakeLlmServer server6;
    if (!server6.listen(0, QHostAddress(QHostAddress::LocalHostIPv6)))
        QSKIP(qPrintable(u"no IPv6 loopback here: "_s + server6.errorString()));
    QString error;
    QVERIFY(server6.loadScriptText("rules:\n  - responses:\n      - {content: \"over IPv6\"}\n", QString(), &error));
    const QString url = u"vllm@http://[::1]:%1/v1::m"_s.arg(server6.port());
    QCOMPARE(server6.baseUrl().toString(), u"http://[::1]:%1"_s.arg(server6.port()));
    LlmRequest r = request(u"p"_s);
    const auto spec = ModelSpec::parse(url, &error);
    QVERIFY2(spec, qPrintable(error));
    r.spec = *spec;
    LlmReply *reply = m_client->send(r);
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    QCOMPARE(reply->response().text, u"over IPv6"_s);
    QCOMPARE(server6.requests().at(0).header("host"), u"[::1]:%1"_s.arg(server6.port()).toLatin1());
    reply->deleteLater();
}

void TestLlmClient::proxy_data()
{
    QTest::addColumn<bool>("systemConfiguration"); // http_proxy in the environment, not the proxy setting
    QTest::addColumn<bool>("stream");
    QTest::addColumn<bool>("excluded"); // no_proxy names the host
    QTest::newRow("proxy setting, streamed") << false << true << false;
    QTest::newRow("proxy setting, whole body") << false << false << false;
    QTest::newRow("http_proxy, streamed") << true << true << false;
    QTest::newRow("http_proxy with no_proxy") << true << true << true;
}

void TestLlmClient::proxy()
{
    // Through a real HTTP proxy (tinyproxy), all of it on loopback.
    QFETCH(bool, systemConfiguration);
    QFETCH(bool, stream);
    QFETCH(bool, excluded);
    test::TinyProxy proxy;
    QString why;
    if (!proxy.start(&why))
        QSKIP(qPrintable(why));
    QString host = u"127.0.0.1"_s;
    QHostAddress address(QHostAddress::LocalHost);
    if (systemConfiguration) {
        // Qt's system configuration leaves loopback literals and localhost alone: a name of this machine
        // that resolves to a loopback address stands in for a provider's host.
        host = QHostInfo::localHostName();
        const QList<QHostAddress> addresses = QHostInfo::fromName(host).addresses();
        const auto loopback = std::find_if(addresses.begin(), addresses.end(), [](const QHostAddress &a) {
            return a.isLoopback() && a.protocol() == QAbstractSocket::IPv4Protocol;
        });
        if (host.isEmpty() || host.startsWith(u"localhost"_s) || loopback == addresses.end())
            QSKIP(qPrintable(u"this machine's name (%1) does not resolve to an IPv4 loopback address"_s.arg(host)));
        address = *loopback;
    }
    FakeLlmServer server;
    QVERIFY2(server.listen(0, address), qPrintable(server.errorString()));
    QString error;
    QVERIFY(server.loadScriptText(
        "rules:\n  - responses:\n      - {content: \"through the proxy\", chunk_delay_ms: 5}\n", QString(), &error));

    const QString proxyUrl = proxy.url();
    const QByteArray oldHttpProxy = qgetenv("http_proxy");
    const QByteArray oldNoProxy = qgetenv("no_proxy");
    const auto restore = qScopeGuard([&] {
        qputenv("http_proxy", oldHttpProxy);
        qputenv("no_proxy", oldNoProxy);
    });
    if (systemConfiguration) {
        qputenv("http_proxy", proxyUrl.toLatin1());
        qputenv("no_proxy", excluded ? host.toLatin1() : QByteArray());
        QVERIFY(m_client->setProxy(QString()));
    } else {
        QVERIFY2(m_client->setProxy(proxyUrl, &error), qPrintable(error));
    }
    LlmRequest r = request(u"p"_s, stream);
    const auto spec = ModelSpec::parse(u"vllm@http://%1:%2/v1::m"_s.arg(host).arg(server.port()), &error);
    QVERIFY2(spec, qPrintable(error));
    r.spec = *spec;
    LlmReply *reply = m_client->send(r);
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error + u"\n"_s + proxy.output()));
    QCOMPARE(reply->response().text, u"through the proxy"_s);
    QCOMPARE(server.requestCount(), 1);
    // tinyproxy says where a request passed through it in a Via header.
    const QByteArray via = server.requests().at(0).header("via");
    if (excluded)
        QVERIFY2(via.isEmpty(), via.constData());
    else
        QVERIFY2(via.contains("tinyproxy"), via.constData());
    reply->deleteLater();

    QString badError;
    QVERIFY(!m_client->setProxy(u"ftp://example.org:21"_s, &badError));
    QVERIFY2(badError.contains(u"ftp://example.org:21"_s), qPrintable(badError));
}

void TestLlmClient::perProviderConcurrencyLimit()
{
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: \"done\", delay_ms: 300}]\n"));
    m_client->setMaxInFlightPerProvider(2);
    std::vector<LlmReply *> replies;
    for (int i = 0; i < 6; ++i) {
        LlmRequest r = request(u"request %1"_s.arg(i));
        r.sampleIndex = i;
        replies.push_back(m_client->send(r));
    }
    int clientPeak = 0;
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 clientPeak = std::max(clientPeak, m_client->inFlight());
                                 return std::all_of(replies.begin(), replies.end(),
                                                    [](LlmReply *r) { return r->isFinished(); });
                             }()),
                             Timeout);
    for (LlmReply *reply : replies) {
        QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
        QCOMPARE(reply->response().text, u"done"_s);
        reply->deleteLater();
    }
    QCOMPARE(m_server->requestCount(), 6);
    QVERIFY2(m_server->peakInFlight() <= 2, qPrintable(u"server saw %1 at once"_s.arg(m_server->peakInFlight())));
    QCOMPARE(m_server->peakInFlight(), 2); // the limit is used, not serialised to one
    QVERIFY(clientPeak <= 2);
    QCOMPARE(m_client->inFlight(), 0);
    QCOMPARE(m_client->queued(), 0);
}

void TestLlmClient::queuedRequestsTakeTurnsAcrossOwners()
{
    // One slot, a run with a backlog of five and a run that queues two later: the second run does not wait
    // for the first one's backlog, the runs alternate while both have work, and each keeps its own order.
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: \"done\", delay_ms: 50}]\n"));
    m_client->setMaxInFlightPerProvider(1);
    std::vector<LlmReply *> replies;
    auto send = [&](const QString &owner, int i) {
        LlmRequest r = request(u"%1 request %2"_s.arg(owner).arg(i));
        r.owner = owner;
        replies.push_back(m_client->send(r));
    };
    for (int i = 0; i < 5; ++i)
        send(u"run 1"_s, i);
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 1, Timeout); // run 1's first request holds the slot
    QCOMPARE(m_client->queued(), 4);
    for (int i = 0; i < 2; ++i)
        send(u"run 2"_s, i);
    QCOMPARE(m_client->queued(), 6);
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(replies.begin(), replies.end(), [](LlmReply *r) { return r->isFinished(); }),
                             Timeout);
    QStringList order;
    for (const test::RecordedRequest &r : m_server->requests())
        order << r.lastUserMessage;
    const QStringList expected{u"run 1 request 0"_s, u"run 2 request 0"_s, u"run 1 request 1"_s, u"run 2 request 1"_s,
                               u"run 1 request 2"_s, u"run 1 request 3"_s, u"run 1 request 4"_s};
    QCOMPARE(order, expected);
    for (LlmReply *reply : replies) {
        QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
        reply->deleteLater();
    }
    QCOMPARE(m_client->queued(), 0);
}

void TestLlmClient::malformedStreamIsRetried()
{
    // A garbled event is an answer the provider produced: failed by default, sent again with resend_billed.
    const QByteArray script = "rules:\n  - responses:\n"
                              "      - {content: \"one two three four five six seven eight\", fault: malformed_json}\n"
                              "      - {content: \"clean\"}\n";
    QVERIFY(loadScript(script));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"malformed"_s), qPrintable(reply->response().error));
    QCOMPARE(m_server->requestCount(), 1);
    reply->deleteLater();

    QVERIFY(loadScript(script));
    m_client->setResendBilled(true);
    reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    QVERIFY2(reply->response().ok, qPrintable(reply->response().error));
    QCOMPARE(reply->response().text, u"clean"_s);
    QCOMPARE(reply->response().retries, 1);
    reply->deleteLater();
}

void TestLlmClient::abortInFlight()
{
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: \"late\", delay_ms: 5000}]\n"));
    LlmReply *reply = m_client->send(request(u"p"_s));
    QSignalSpy spy(reply, &LlmReply::finished);
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 1, Timeout);
    reply->abort();
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 2000);
    QVERIFY(!reply->response().ok);
    QVERIFY2(reply->response().error.contains(u"cancel"_s), qPrintable(reply->response().error));
    QCOMPARE(m_client->inFlight(), 0);
    QTest::qWait(300);
    QCOMPARE(m_server->requestCount(), 1); // a cancel is not retried
    QCOMPARE(spy.size(), 1);
    reply->deleteLater();
}

void TestLlmClient::abortQueuedIsPrompt()
{
    // A request waiting for a free slot is cancelled at once, not when the slot frees up.
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: \"slow\", delay_ms: 4000}]\n"));
    m_client->setMaxInFlightPerProvider(1);
    LlmReply *running = m_client->send(request(u"first"_s));
    LlmReply *queued = m_client->send(request(u"second"_s));
    QSignalSpy spy(queued, &LlmReply::finished);
    QTRY_COMPARE_WITH_TIMEOUT(m_server->requestCount(), 1, Timeout);
    QCOMPARE(m_client->queued(), 1);
    queued->abort();
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 1500);
    QVERIFY(!queued->response().ok);
    QVERIFY(!running->isFinished());
    QVERIFY(waitFor(running));
    QVERIFY(running->response().ok);
    QCOMPARE(m_server->requestCount(), 1); // the cancelled request was never sent
    running->deleteLater();
    queued->deleteLater();
}

void TestLlmClient::totalTimeoutIsNotRetried()
{
    // The total timeout bounds the whole request, retries included.
    QVERIFY(loadScript("rules:\n  - cycle: true\n    responses: [{content: \"too late\", delay_ms: 3000}]\n"));
    m_client->setTotalTimeoutMs(500);
    LlmReply *reply = m_client->send(request(u"p"_s));
    QVERIFY(waitFor(reply));
    QVERIFY2(!reply->response().ok, "the answer arrived after the total timeout but was accepted");
    QVERIFY2(reply->response().error.contains(u"timeout"_s), qPrintable(reply->response().error));
    QVERIFY2(reply->response().latencyMs < 2500, qPrintable(QString::number(reply->response().latencyMs)));
    reply->deleteLater();
}

void TestLlmClient::requestHash()
{
    const LlmRequest base = request(u"the same prompt"_s);
    QCOMPARE(base.hash(), request(u"the same prompt"_s).hash());
    QCOMPARE(base.hash().size(), 64);
    QVERIFY(QByteArray::fromHex(base.hash().toLatin1()).size() == 32);

    LlmRequest sample = base;
    sample.sampleIndex = 1;
    QVERIFY(sample.hash() != base.hash());
    LlmRequest prompt = base;
    prompt.prompt += u' ';
    QVERIFY(prompt.hash() != base.hash());
    LlmRequest temperature = base;
    temperature.temperature = 1.0;
    QVERIFY(temperature.hash() != base.hash());
    LlmRequest model = base;
    model.spec.model = u"m2"_s;
    QVERIFY(model.hash() != base.hash());
    // Boundaries between fields matter: moving text from system to prompt is a different request.
    LlmRequest a = base;
    a.system = u"ab"_s;
    a.prompt = u"c"_s;
    LlmRequest b = base;
    b.system = u"a"_s;
    b.prompt = u"bc"_s;
    QVERIFY(a.hash() != b.hash());
    // Streaming or not gives the same answer; a cached response serves both.
    LlmRequest nonStream = base;
    nonStream.stream = false;
    QCOMPARE(nonStream.hash(), base.hash());
}

void TestLlmClient::stripReasoning_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reasoning");

    QTest::newRow("none") << u"plain answer"_s << u"plain answer"_s << QString();
    QTest::newRow("think") << u"<think>hmm</think>answer"_s << u"answer"_s << u"hmm"_s;
    QTest::newRow("thinking, multi-line") << u"<thinking>\na\nb\n</thinking>\n\nanswer"_s << u"answer"_s << u"a\nb"_s;
    QTest::newRow("two blocks") << u"<think>one</think>mid<reasoning>two</reasoning>end"_s << u"midend"_s
                                << u"one\n\ntwo"_s;
    QTest::newRow("unclosed block keeps the text")
        << u"<think>never closed answer"_s << u"<think>never closed answer"_s << QString();
}

void TestLlmClient::stripReasoning()
{
    QFETCH(QString, input);
    QFETCH(QString, text);
    QFETCH(QString, reasoning);
    QString actualReasoning;
    QCOMPARE(LlmClient::stripReasoning(input, &actualReasoning), text);
    QCOMPARE(actualReasoning, reasoning);
}

void TestLlmClient::modelSpecParse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("provider");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("baseUrl");
    QTest::addColumn<QString>("errorMentions");

    QTest::newRow("openai") << u"openai::gpt-5.2"_s << true << u"openai"_s << u"gpt-5.2"_s
                            << u"https://api.openai.com/v1"_s << QString();
    QTest::newRow("anthropic") << u"anthropic::claude-opus-4-5"_s << true << u"anthropic"_s << u"claude-opus-4-5"_s
                               << u"https://api.anthropic.com"_s << QString();
    QTest::newRow("vllm default base") << u"vllm::qwen"_s << true << u"vllm"_s << u"qwen"_s
                                       << u"http://localhost:8000/v1"_s << QString();
    QTest::newRow("vllm with URL") << u"vllm@http://h:1/v1::m"_s << true << u"vllm"_s << u"m"_s << u"http://h:1/v1"_s
                                   << QString();
    QTest::newRow("openai-compatible with URL")
        << u"openai-compatible@http://10.0.0.2:8080/v1::llama-3"_s << true << u"openai-compatible"_s << u"llama-3"_s
        << u"http://10.0.0.2:8080/v1"_s << QString();
    QTest::newRow("together with slash in model")
        << u"together::meta-llama/Llama-3.3-70B"_s << true << u"together"_s << u"meta-llama/Llama-3.3-70B"_s
        << u"https://api.together.xyz/v1"_s << QString();
    QTest::newRow("surrounding spaces") << u"  openai::gpt-4o  "_s << true << u"openai"_s << u"gpt-4o"_s
                                        << u"https://api.openai.com/v1"_s << QString();
    QTest::newRow("bare gpt infers openai")
        << u"gpt-4o"_s << true << u"openai"_s << u"gpt-4o"_s << u"https://api.openai.com/v1"_s << QString();
    QTest::newRow("bare o3 infers openai")
        << u"o3-mini"_s << true << u"openai"_s << u"o3-mini"_s << u"https://api.openai.com/v1"_s << QString();
    QTest::newRow("bare claude infers anthropic")
        << u"claude-x"_s << true << u"anthropic"_s << u"claude-x"_s << u"https://api.anthropic.com"_s << QString();
    QTest::newRow("bare gemini infers gcp") << u"gemini-2.5-pro"_s << true << u"gcp"_s << u"gemini-2.5-pro"_s
                                            << u"https://generativelanguage.googleapis.com/v1beta"_s << QString();
    QTest::newRow("openai-compatible without URL")
        << u"openai-compatible::m"_s << false << QString() << QString() << QString() << u"base URL"_s;
    QTest::newRow("unknown provider") << u"madeup::m"_s << false << QString() << QString() << QString() << u"madeup"_s;
    QTest::newRow("bare name of no known family")
        << u"my-local-model"_s << false << QString() << QString() << QString() << u"provider::model"_s;
    QTest::newRow("empty model") << u"openai::"_s << false << QString() << QString() << QString() << u"empty"_s;
    QTest::newRow("invalid URL") << u"vllm@not a url::m"_s << false << QString() << QString() << QString()
                                 << u"not a valid base URL"_s;
}

void TestLlmClient::modelSpecParse()
{
    QFETCH(QString, text);
    QFETCH(bool, ok);
    QFETCH(QString, provider);
    QFETCH(QString, model);
    QFETCH(QString, baseUrl);
    QFETCH(QString, errorMentions);

    QString error;
    const auto spec = ModelSpec::parse(text, &error);
    QCOMPARE(spec.has_value(), ok);
    if (ok) {
        QCOMPARE(spec->provider, provider);
        QCOMPARE(spec->model, model);
        QCOMPARE(spec->baseUrl, QUrl(baseUrl));
        QCOMPARE(spec->text, text.trimmed());
    } else {
        QVERIFY2(error.contains(errorMentions), qPrintable(error));
        QVERIFY2(error.contains(text), qPrintable(error)); // the message names what the user wrote
    }
}

void TestLlmClient::modelSpecVllmUsesEnvironment()
{
    qputenv("VLLM_API_BASE", "http://gpu-node-7:9000/v1");
    QString error;
    const auto spec = ModelSpec::parse(u"vllm::x"_s, &error);
    const auto explicitUrl = ModelSpec::parse(u"vllm@http://h:1/v1::x"_s, &error);
    qunsetenv("VLLM_API_BASE");
    QVERIFY2(spec, qPrintable(error));
    QCOMPARE(spec->baseUrl, QUrl(u"http://gpu-node-7:9000/v1"_s));
    QVERIFY(explicitUrl);
    QCOMPARE(explicitUrl->baseUrl, QUrl(u"http://h:1/v1"_s)); // an explicit URL wins over the environment
}

void TestLlmClient::backoffSeconds_data()
{
    QTest::addColumn<int>("attempt");
    QTest::addColumn<QByteArray>("retryAfterMs");
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::addColumn<double>("random");
    QTest::addColumn<double>("low");
    QTest::addColumn<double>("high");

    QTest::newRow("retry-after-ms") << 0 << QByteArray("250") << QByteArray() << 0.5 << 0.25 << 0.25;
    QTest::newRow("retry-after-ms wins over retry-after")
        << 3 << QByteArray("100") << QByteArray("7") << 0.5 << 0.1 << 0.1;
    QTest::newRow("retry-after seconds") << 0 << QByteArray() << QByteArray("3") << 0.5 << 3.0 << 3.0;
    QTest::newRow("retry-after zero") << 2 << QByteArray() << QByteArray("0") << 0.5 << 0.0 << 0.0;
    QTest::newRow("retry-after beyond cap") << 0 << QByteArray() << QByteArray("500") << 0.0 << 0.0 << 120.0;
    QTest::newRow("retry-after-ms beyond cap") << 0 << QByteArray("9000000") << QByteArray() << 0.0 << 0.0 << 120.0;
    QTest::newRow("garbage hint falls back") << 1 << QByteArray("soon") << QByteArray("later") << 0.0 << 1.0 << 1.0;
    QTest::newRow("attempt 0, no jitter") << 0 << QByteArray() << QByteArray() << 0.0 << 0.5 << 0.5;
    QTest::newRow("attempt 0, full jitter") << 0 << QByteArray() << QByteArray() << 1.0 << 0.375 << 0.375;
    QTest::newRow("attempt 1") << 1 << QByteArray() << QByteArray() << 0.0 << 1.0 << 1.0;
    QTest::newRow("attempt 3") << 3 << QByteArray() << QByteArray() << 0.0 << 4.0 << 4.0;
    QTest::newRow("attempt 4 reaches 8") << 4 << QByteArray() << QByteArray() << 0.0 << 8.0 << 8.0;
    QTest::newRow("attempt 10 capped at 8") << 10 << QByteArray() << QByteArray() << 0.0 << 8.0 << 8.0;
    QTest::newRow("attempt 10, full jitter") << 10 << QByteArray() << QByteArray() << 1.0 << 6.0 << 6.0;
}

void TestLlmClient::backoffSeconds()
{
    QFETCH(int, attempt);
    QFETCH(QByteArray, retryAfterMs);
    QFETCH(QByteArray, retryAfter);
    QFETCH(double, random);
    QFETCH(double, low);
    QFETCH(double, high);

    const double seconds = LlmClient::backoffSeconds(attempt, retryAfterMs, retryAfter, random);
    QVERIFY2(seconds >= low - 1e-9 && seconds <= high + 1e-9,
             qPrintable(u"%1 s not in [%2, %3]"_s.arg(seconds).arg(low).arg(high)));
}

void TestLlmClient::backoffHonoursHttpDate()
{
    // Retry-After may be an HTTP-date (RFC 9110 §10.2.3), always written in GMT.
    const QDateTime when = QDateTime::currentDateTimeUtc().addSecs(30);
    const QByteArray date = QLocale::c().toString(when, u"ddd, dd MMM yyyy hh:mm:ss 'GMT'"_s).toLatin1();
    const double seconds = LlmClient::backoffSeconds(0, {}, date, 0.0);
    QVERIFY2(seconds >= 25 && seconds <= 31, qPrintable(u"%1 s for %2"_s.arg(seconds).arg(QString::fromLatin1(date))));
}

void TestLlmClient::retryableStatus_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("retryable");
    for (int s : {408, 409, 429, 500, 502, 503, 504, 529})
        QTest::addRow("%d", s) << s << true;
    for (int s : {400, 401, 403, 404, 413, 422})
        QTest::addRow("%d", s) << s << false;
}

void TestLlmClient::retryableStatus()
{
    QFETCH(int, status);
    QFETCH(bool, retryable);
    QCOMPARE(LlmClient::isRetryableStatus(status), retryable);
}

QTEST_GUILESS_MAIN(TestLlmClient)
#include "tst_llm_client.moc"
