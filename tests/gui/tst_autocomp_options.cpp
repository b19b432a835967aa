// Autocomp's newer search options in the New Run dialog (issue 29): each has a widget whose tooltip names its
// `search:` key, and the values reach the configuration the dialog starts and saves, both ways; and the phase
// names the inspector shows for the calls these options make.
#include "model/llm_call.h"
#include "catalog/repository.h"
#include "dialogs/new_run_dialog.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QtTest>

using namespace autocomp;

class TestAutocompOptions : public QObject
{
    Q_OBJECT

    template<typename T>
    static T *child(QObject *parent, const char *name)
    {
        T *w = parent->findChild<T *>(QLatin1String(name));
        if (!w)
            qWarning() << "no child" << name;
        return w;
    }

private Q_SLOTS:
    void dialogCarriesTheOptionsBothWays()
    {
        NewRunDialog dialog{Repository{}, QString{}};
        auto *skip = child<QCheckBox>(&dialog, "skipPlanning");
        auto *oneShot = child<QCheckBox>(&dialog, "oneShotMenu");
        auto *rate = child<QDoubleSpinBox>(&dialog, "exampleRate");
        auto *score = child<QCheckBox>(&dialog, "translateScore");
        auto *perf = child<QDoubleSpinBox>(&dialog, "translatePerfThreshold");
        QVERIFY(skip && oneShot && rate && score && perf);
        // Defaults: off, except the translation score (our behaviour before these options) and the threshold 15.
        SearchConfig s = dialog.config().search;
        QCOMPARE(s.skipPlanning, false);
        QCOMPARE(s.menuStrategy, QString());
        QVERIFY(!s.exampleRate);
        QCOMPARE(s.translateScore, true);
        QCOMPARE(s.translatePerfThreshold, 15.0);
        const QList<std::pair<QWidget *, const char *>> keys{{skip, "search.skip_planning"},
                                                             {oneShot, "search.menu_strategy"},
                                                             {rate, "search.example_rate"},
                                                             {score, "search.translate_score"},
                                                             {perf, "search.translate_perf_threshold"}};
        for (const auto &[widget, key] : keys)
            QVERIFY2(widget->toolTip().contains(QLatin1String(key)), key);

        RunConfig config = dialog.config();
        config.search.skipPlanning = true;
        config.search.menuStrategy = QStringLiteral("one-shot");
        config.search.exampleRate = 0.5;
        config.search.translateScore = false;
        config.search.translatePerfThreshold = 4;
        dialog.setConfig(config);
        QVERIFY(skip->isChecked() && oneShot->isChecked() && !score->isChecked());
        QCOMPARE(rate->value(), 0.5);
        QCOMPARE(perf->value(), 4.0);
        s = dialog.config().search;
        QCOMPARE(s.skipPlanning, true);
        QCOMPARE(s.menuStrategy, QStringLiteral("one-shot"));
        QCOMPARE(s.exampleRate.value_or(-1), 0.5);
        QCOMPARE(s.translateScore, false);
        QCOMPARE(s.translatePerfThreshold, 4.0);
        // What the dialog saves reads back the same.
        QStringList errors;
        RunConfig saved = dialog.config();
        saved.planModels = QStringList{QStringLiteral("vllm::m")}; // no model was added in the form
        const auto reread = RunConfig::fromYaml(saved.toYaml(), QStringLiteral("saved.yaml"), &errors);
        QVERIFY2(reread, qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(reread->search.menuStrategy, QStringLiteral("one-shot"));
        QCOMPARE(reread->search.exampleRate.value_or(-1), 0.5);
        QCOMPARE(reread->search.translatePerfThreshold, 4.0);
        QCOMPARE(reread->search.skipPlanning, true);
        QCOMPARE(reread->search.translateScore, false);
        // Off again: the example rate's "off" is no example_rate at all.
        rate->setValue(0);
        oneShot->setChecked(false);
        QVERIFY(!dialog.config().search.exampleRate);
        QCOMPARE(dialog.config().search.menuStrategy, QString());
    }

    void badValuesAreErrorsNamingTheKey()
    {
        QStringList errors;
        QVERIFY(!RunConfig::fromYaml(
            "target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::m\"]}\nsearch: {menu_strategy: two-shot}\n",
            QStringLiteral("r.yaml"), &errors));
        QVERIFY2(errors.join(QLatin1Char('\n')).contains(QStringLiteral("r.yaml:4:")),
                 qPrintable(errors.join(QLatin1Char('\n'))));
        errors.clear();
        QVERIFY(!RunConfig::fromYaml(
            "target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::m\"]}\nsearch: {example_rate: 1.5}\n",
            QStringLiteral("r.yaml"), &errors));
        QVERIFY2(errors.join(QLatin1Char('\n')).contains(QStringLiteral("search.example_rate")),
                 qPrintable(errors.join(QLatin1Char('\n'))));
        // Autocomp's spelling of "no one-shot menu" is accepted.
        errors.clear();
        const auto none = RunConfig::fromYaml(
            "target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::m\"]}\nsearch: {menu_strategy: None}\n",
            QStringLiteral("r.yaml"), &errors);
        QVERIFY2(none, qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(none->search.menuStrategy, QString());
    }

    void phasesHaveReadableNames()
    {
        QCOMPARE(phaseName(QStringLiteral("menu")), QStringLiteral("one-shot menu"));
        QCOMPARE(phaseName(QStringLiteral("examples")), QStringLiteral("example selection"));
        QCOMPARE(phaseName(QStringLiteral("score")), QStringLiteral("translation score"));
        QCOMPARE(phaseName(QStringLiteral("plan")), QStringLiteral("plan"));
    }
};

QTEST_MAIN(TestAutocompOptions)
#include "tst_autocomp_options.moc"
