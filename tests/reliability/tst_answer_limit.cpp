// The contract LlmClient keeps for answer sizes (llm.max_answer_bytes): an endless or huge answer, streamed
// or not, is cut off at the limit, the call fails with that reason at once (no retry, nothing of the answer
// kept), and an answer under the limit is untouched.
#include "fake_llm_server.h"
#include "llm/llm_client.h"
#include "llm/model_spec.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace autocomp;
using autocomp::test::FakeLlmServer;

class TestAnswerLimit : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    LlmReply *send(LlmClient &client, const FakeLlmServer &server, bool stream)
    {
        QString error;
        const auto spec = ModelSpec::parse(u"vllm@"_s + server.baseUrl().toString() + u"/v1::m"_s, &error);
        if (!spec)
            return nullptr;
        LlmRequest r;
        r.spec = *spec;
        r.prompt = u"Plan:"_s;
        r.stream = stream;
        return client.send(r);
    }

private Q_SLOTS:
    void answerPastTheLimitIsCutOff_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::addColumn<bool>("stream");
        QTest::addColumn<bool>("cut");
        QTest::newRow("endless stream") << u"endless"_s << true << true;
        QTest::newRow("endless body") << u"endless"_s << false << true;
        QTest::newRow("huge stream") << u"huge"_s << true << true;
        QTest::newRow("huge body") << u"huge"_s << false << true;
        QTest::newRow("under the limit") << u"small"_s << true << false;
    }

    void answerPastTheLimitIsCutOff()
    {
        QFETCH(QString, fault);
        QFETCH(bool, stream);
        QFETCH(bool, cut);
        QVERIFY(m_dir.isValid());
        const qint64 limit = 100000;
        QByteArray script = "rules:\n  - name: answer\n    match: 'Plan:'\n    cycle: true\n    responses:\n";
        if (fault == u"endless"_s) {
            script += "      - {content: \"Chosen optimization: 1. tile\\n\", fault: endless}\n";
        } else {
            QFile file(m_dir.filePath(fault + u".txt"_s));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray(fault == u"huge"_s ? 3 * limit : limit / 4, 'x'));
            file.close();
            script += "      - {content_file: " + fault.toUtf8() + ".txt}\n";
        }
        FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script, m_dir.path(), &error), qPrintable(error));
        LlmClient client;
        client.setApiKeyLookup([](const QString &) { return QString(); });
        client.setMaxAnswerBytes(limit);
        LlmReply *reply = send(client, server, stream);
        QVERIFY(reply);
        QSignalSpy finished(reply, &LlmReply::finished);
        QVERIFY(finished.wait(60000));
        const LlmResponse &r = reply->response();
        if (!cut) {
            QVERIFY2(r.ok, qPrintable(r.error));
            QCOMPARE(r.text.size(), limit / 4);
            return;
        }
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains(u"llm.max_answer_bytes (100000)"_s), qPrintable(r.error));
        QVERIFY(r.text.isEmpty());
        QVERIFY(r.partial.isEmpty());
        QCOMPARE(r.retries, 0);
        QCOMPARE(server.requestCount(), 1);
    }
};

QTEST_GUILESS_MAIN(TestAnswerLimit)
#include "tst_answer_limit.moc"
