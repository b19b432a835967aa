#include "dialogs/new_run_dialog.h"

#include "editors/executor_editor.h"

#include "llm/price_table.h"
#include "search/run_setup.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QScreen>
#include <QScrollArea>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

// GCC 12 at -O3 reports the inlined QList<double>{...} default of SearchConfig::parentSlack as maybe
// uninitialized where a RunConfig is built here (a false positive: the list is a constant initializer; the
// same as in core/study/study_config.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace autocomp {

namespace {

QStringList itemsOf(const QListWidget *list)
{
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        if (const QString text = list->item(i)->text().trimmed(); !text.isEmpty())
            out << text;
    return out;
}

void setItems(QListWidget *list, const QStringList &items)
{
    list->clear();
    for (const QString &text : items) {
        auto *item = new QListWidgetItem(text, list);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
    }
}

bool isLoopback(const QUrl &url)
{
    const QString host = url.host();
    return host == QLatin1String("localhost") || host.startsWith(QLatin1String("127.")) || host == QLatin1String("::1");
}

} // namespace

NewRunDialog::NewRunDialog(Repository repository, QString storePath, QWidget *parent)
    : QDialog(parent)
    , m_repository(std::move(repository))
    , m_storePath(std::move(storePath))
    , m_validateTimer(new QTimer(this))
    , m_secrets(new SecretStore(this))
{
    setObjectName(QStringLiteral("newRunDialog"));
    setWindowTitle(tr("New Run"));
    m_validateTimer->setSingleShot(true);
    m_validateTimer->setInterval(120);
    connect(m_validateTimer, &QTimer::timeout, this, &NewRunDialog::validateNow);

    createTargetFields();
    QLayout *scheduleRow = createSearchFields();
    createLimitFields();
    QWidget *form = buildForm(scheduleRow);
    m_errorsLabel = new QLabel;
    m_errorsLabel->setObjectName(QStringLiteral("validationErrors"));
    m_errorsLabel->setWordWrap(true);
    m_errorsLabel->setTextFormat(Qt::PlainText);
    m_errorsLabel->setStyleSheet(QStringLiteral("QLabel#validationErrors { color: #d03030; }"));
    m_errorsLabel->hide();

    QDialogButtonBox *buttons = createButtons();
    // The form scrolls; the problems found and the buttons stay pinned below it, so Start and Cancel are
    // always in reach on a small screen (an ssh or slurm executor makes the form taller than 800 px).
    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("newRunScroll"));
    scroll->setWidget(form);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addWidget(m_errorsLabel);
    layout->addWidget(buttons);
    // As tall as the form wants, but never taller than the screen: the rest scrolls.
    if (QScreen *where = parent ? parent->screen() : screen()) {
        const QRect available = where->availableGeometry();
        const QSize wanted = form->sizeHint() + QSize(40, buttons->sizeHint().height() + 60);
        resize(std::min(wanted.width(), available.width() - 40), std::min(wanted.height(), available.height() - 80));
    }

    connectValidation();

    // Each provider's keychain entry, read once; the environment is looked at whenever the state is shown.
    connect(m_secrets, &SecretStore::keyRead, this,
            [this](const QString &provider, const QString &, KeyStatus status, const QString &) {
                m_stored.insert(provider, status);
                updateKeyState();
            });
    for (const QString &provider : SecretStore::providers())
        if (SecretStore::keyRequired(provider))
            m_secrets->readStoredKey(provider);
    fillModelNames();

    RunConfig defaults;
    defaults.target = m_repository.targetNames().contains(QStringLiteral("cpu")) ? QStringLiteral("cpu")
                                                                                 : m_target->itemText(0);
    setConfig(defaults);
}

void NewRunDialog::targetChanged()
{
    const QString target = m_target->currentText();
    {
        QString error;
        const auto t = m_repository.target(target, &error);
        if (!t)
            m_targetState->setText(tr("Invalid target: %1").arg(error));
        else if (t->available())
            m_targetState->setText(
                tr("Available · metric %1 (%2)%3")
                    .arg(t->metric, t->metricUnit,
                         t->measurement.isEmpty() ? QString() : QStringLiteral(" · ") + t->measurement));
        else if (!t->missingPrograms().isEmpty())
            m_targetState->setText(tr("Absent on this machine: %1 not found%2")
                                       .arg(t->missingPrograms().join(QLatin1String(", ")),
                                            t->requires_.isEmpty() ? QString() : tr(" (needs %1)").arg(t->requires_)));
        else
            m_targetState->setText(t->absenceReason()); // its check failed: the check's own reason
        // Where its tools were found outside the system's folders (a setting, a toolchain under /opt): the steps
        // get them on PATH and see them in the sandbox.
        if (t) {
            if (const QStringList tools = t->toolNotes(); !tools.isEmpty())
                m_targetState->setText(m_targetState->text() + QStringLiteral("\n")
                                       + tr("Tools: %1").arg(tools.join(QStringLiteral("; "))));
        }
    }
    const QString previous = m_problem->currentText();
    {
        const QSignalBlocker blocker(m_problem);
        m_problem->clear();
        m_problem->addItems(m_repository.problemNames(target));
        m_problem->setCurrentIndex(qMax(0, m_problem->findText(previous)));
    }
    m_executor->setTarget(target);
    // An agent is usually named after its target.
    if (const int agent = m_agent->findText(target); agent >= 0)
        m_agent->setCurrentIndex(agent);
    scheduleValidation();
}

void NewRunDialog::setConfig(const RunConfig &config)
{
    m_base = config;
    if (m_target->findText(config.target) < 0)
        m_target->addItem(config.target);
    m_target->setCurrentText(config.target);
    targetChanged();
    if (!config.problem.isEmpty()) {
        if (m_problem->findText(config.problem) < 0)
            m_problem->addItem(config.problem);
        m_problem->setCurrentText(config.problem);
    }
    const QString agent = config.effectiveAgent();
    if (m_agent->findText(agent) < 0)
        m_agent->addItem(agent);
    m_agent->setCurrentText(agent);
    setItems(m_planModels, config.planModels);
    setItems(m_codeModels, config.codeModels);
    const SearchConfig &s = config.search;
    m_beamWidth->setValue(s.beamWidth);
    m_plansPerParent->setValue(s.plansPerParent);
    m_codePerPlan->setValue(s.codePerPlan);
    m_iterations->setValue(s.iterations);
    m_dropout->setValue(s.menuDropout);
    m_fixAttempts->setValue(s.fixAttempts);
    m_editMode->setChecked(s.editMode);
    m_feedback->setChecked(s.feedback);
    m_translateIters->setValue(s.translateIters);
    m_skipPlanning->setChecked(s.skipPlanning);
    m_oneShotMenu->setChecked(s.menuStrategy == QLatin1String("one-shot"));
    m_exampleRate->setValue(s.exampleRate.value_or(0.0));
    m_translateScore->setChecked(s.translateScore);
    m_translatePerf->setValue(s.translatePerfThreshold);
    m_seed->setValue(int(qMin<quint64>(s.seed, quint64(std::numeric_limits<int>::max()))));
    m_schedule->setText(s.schedule);
    m_maxUsd->setValue(config.budget.maxUsd.value_or(0));
    m_maxCalls->setValue(int(qMin<qint64>(config.budget.maxLlmCalls.value_or(0), std::numeric_limits<int>::max())));
    m_maxHours->setValue(config.budget.maxHours.value_or(0));
    m_executor->setEvaluation(config.evaluation, config.target);
    m_sandbox->setCurrentText(config.evaluation.sandbox);
    m_profile->setChecked(config.evaluation.profile);
    validateNow();
}

RunConfig NewRunDialog::config() const
{
    RunConfig c = m_base;
    c.target = m_target->currentText();
    c.problem = m_problem->currentText();
    // The agent is written out only where it differs from the default (the target's name).
    c.agent = m_agent->currentText() == c.target ? QString() : m_agent->currentText();
    c.planModels = itemsOf(m_planModels);
    c.codeModels = itemsOf(m_codeModels);
    SearchConfig &s = c.search;
    s.beamWidth = m_beamWidth->value();
    s.plansPerParent = m_plansPerParent->value();
    s.codePerPlan = m_codePerPlan->value();
    s.iterations = m_iterations->value();
    s.menuDropout = m_dropout->value();
    s.fixAttempts = m_fixAttempts->value();
    s.editMode = m_editMode->isChecked();
    s.feedback = m_feedback->isChecked();
    s.translateIters = m_translateIters->value();
    s.skipPlanning = m_skipPlanning->isChecked();
    s.menuStrategy = m_oneShotMenu->isChecked() ? QStringLiteral("one-shot") : QString();
    // 0 is "off"; an example_rate of 0 loaded from a file is kept as it was.
    if (m_exampleRate->value() > 0 || !(m_base.search.exampleRate && *m_base.search.exampleRate == 0))
        s.exampleRate = m_exampleRate->value() > 0 ? std::optional<double>(m_exampleRate->value()) : std::nullopt;
    s.translateScore = m_translateScore->isChecked();
    s.translatePerfThreshold = m_translatePerf->value();
    // The seed box holds only int range; a larger seed from a loaded file is kept as it was.
    if (m_base.search.seed <= quint64(std::numeric_limits<int>::max())
        || m_seed->value() != std::numeric_limits<int>::max())
        s.seed = quint64(m_seed->value());
    s.schedule = m_schedule->text().trimmed();
    c.budget.maxUsd = m_maxUsd->value() > 0 ? std::optional<double>(m_maxUsd->value()) : std::nullopt;
    c.budget.maxLlmCalls = m_maxCalls->value() > 0 ? std::optional<qint64>(m_maxCalls->value()) : std::nullopt;
    c.budget.maxHours = m_maxHours->value() > 0 ? std::optional<double>(m_maxHours->value()) : std::nullopt;
    m_executor->apply(&c.evaluation);
    c.evaluation.sandbox = m_sandbox->currentText();
    c.evaluation.profile = m_profile->isChecked();
    return c;
}

void NewRunDialog::scheduleValidation() { m_validateTimer->start(); }

void NewRunDialog::validateNow()
{
    m_validateTimer->stop();
    const RunConfig c = config();
    QStringList errors = m_executor->errors() + c.validate();
    m_setup.reset();
    if (errors.isEmpty()) {
        const QByteArray yaml = c.toYaml();
        m_setup = prepareRun(c, yaml, m_repository, m_storePath, &errors);
    }
    m_errors = errors;
    if (m_attempted)
        showErrors();
    updateEstimate();
    updateKeyState();
}

void NewRunDialog::startClicked()
{
    m_attempted = true;
    validateNow();
    if (m_setup && m_keyProblem.isEmpty()) {
        accept();
        return;
    }
    // The first field concerned takes the focus.
    if (m_whatErrors->isVisibleTo(this))
        m_target->setFocus();
    else if (m_modelErrors->isVisibleTo(this))
        m_planModels->setFocus();
    else if (m_searchErrors->isVisibleTo(this))
        m_beamWidth->setFocus();
}

void NewRunDialog::showErrors()
{
    QStringList what;
    QStringList models;
    QStringList search;
    QStringList limits;
    QStringList where = m_executor->errors();
    for (const QString &error : std::as_const(m_errors)) {
        if (where.contains(error))
            continue;
        // RunConfig names the key it checks ('search.beam_width'); prepareRun names models.plan / models.code.
        if (error.startsWith(QLatin1String("models.")) || error.startsWith(QLatin1String("'models.")))
            models << error;
        else if (error.startsWith(QLatin1String("'search.")))
            search << error;
        else if (error.startsWith(QLatin1String("'budget.")))
            limits << error;
        else if (error.startsWith(QLatin1String("'evaluation.")))
            where << error;
        else
            what << error; // the target, the problem, the agent
    }
    const auto show = [](QLabel *label, const QStringList &lines) {
        label->setText(lines.join(QLatin1Char('\n')));
        label->setVisible(!lines.isEmpty());
    };
    show(m_whatErrors, what);
    show(m_modelErrors, models);
    show(m_searchErrors, search);
    show(m_limitsErrors, limits);
    show(m_executorErrors, where);
}

void NewRunDialog::fillModelNames()
{
    const QString provider = m_modelProvider->currentData().toString();
    // The models the price table knows for the provider; any other name can be typed.
    QStringList names;
    const QString prefix = provider + QStringLiteral("::");
    const PriceTable prices = PriceTable::loadDefault();
    for (auto it = prices.entries().cbegin(), end = prices.entries().cend(); it != end; ++it)
        if (it.key().startsWith(prefix))
            names << it.key().mid(prefix.size());
    names.sort();
    m_modelName->clear();
    m_modelName->addItems(names);
    if (provider == QLatin1String("openai-compatible"))
        m_modelName->lineEdit()->setPlaceholderText(QStringLiteral("http://host:port/v1::MODEL"));
    else if (names.isEmpty())
        m_modelName->lineEdit()->setPlaceholderText(tr("MODEL, as the server names it"));
    else
        m_modelName->lineEdit()->setPlaceholderText(QString());
    // A common default first: the provider's current flagship where the price table has it.
    for (const QString &preferred :
         {QStringLiteral("gpt-5.2"), QStringLiteral("claude-opus-4-5"), QStringLiteral("gemini-2.5-pro")})
        if (const int index = m_modelName->findText(preferred); index >= 0)
            m_modelName->setCurrentIndex(index);
    if (names.isEmpty())
        m_modelName->setEditText(QString());
}

QString NewRunDialog::pickedModel() const
{
    const QString provider = m_modelProvider->currentData().toString();
    const QString name = m_modelName->currentText().trimmed();
    if (provider == QLatin1String("openai-compatible"))
        return QStringLiteral("openai-compatible@")
            + (name.isEmpty() ? QStringLiteral("http://localhost:8000/v1::MODEL") : name);
    return provider + QStringLiteral("::") + (name.isEmpty() ? QStringLiteral("MODEL") : name);
}

QString NewRunDialog::providerKeyState(const QString &provider, bool *missing) const
{
    *missing = false;
    QString variable;
    if (SecretStore::hasEnvironmentCredentials(provider, &variable))
        return tr("key from %1").arg(variable);
    if (!SecretStore::keyRequired(provider))
        return tr("local server, no key needed");
    const auto stored = m_stored.constFind(provider);
    if (stored == m_stored.cend())
        return tr("checking the keychain…");
    if (*stored == KeyStatus::Stored)
        return tr("key stored in the keychain");
    *missing = true;
    return tr("key missing: set %1").arg(ModelSpec::apiKeyVariable(provider));
}

QString NewRunDialog::modelKeyState(const ModelSpec &spec, bool *missing) const
{
    QString state = providerKeyState(spec.provider, missing);
    // A server on this machine speaking a hosted provider's protocol takes no key either.
    if (*missing && isLoopback(spec.baseUrl)) {
        *missing = false;
        return tr("local server, no key needed");
    }
    return state;
}

void NewRunDialog::updateKeyState()
{
    for (int i = 0; i < m_modelProvider->count(); ++i) {
        const QString provider = m_modelProvider->itemData(i).toString();
        bool missing = false;
        const QString state = providerKeyState(provider, &missing);
        m_modelProvider->setItemText(i, QStringLiteral("%1 — %2").arg(provider, state));
        m_modelProvider->setItemData(
            i, missing && SecretStore::keychainReachable() ? tr("%1, or store a key in Settings").arg(state) : state,
            Qt::ToolTipRole);
    }

    QStringList chosen = itemsOf(m_planModels);
    for (const QString &code : itemsOf(m_codeModels))
        if (!chosen.contains(code))
            chosen << code;
    QStringList lines;
    QStringList withoutKey;
    for (const QString &text : std::as_const(chosen)) {
        QString error;
        const std::optional<ModelSpec> spec = ModelSpec::parse(text, &error);
        if (!spec)
            continue; // said by the validation, next to the models
        bool missing = false;
        const QString state = modelKeyState(*spec, &missing);
        const QString line = QStringLiteral("%1: %2").arg(text.toHtmlEscaped(), state.toHtmlEscaped());
        lines << (missing ? QStringLiteral("<span style=\"color:#d03030\">%1</span>").arg(line) : line);
        if (missing)
            withoutKey << (SecretStore::keychainReachable()
                               ? tr("%1 has no API key: set %2 in the environment or store a key in Settings")
                               : tr("%1 has no API key: set %2 in the environment (there is no keychain here)"))
                              .arg(text, ModelSpec::apiKeyVariable(spec->provider));
    }
    const QString keys = lines.join(QStringLiteral("<br>"));
    if (m_modelKeys->text() != keys)
        m_modelKeys->setText(keys);
    m_modelKeys->setVisible(!lines.isEmpty());
    m_keyProblem = withoutKey.join(QLatin1Char('\n'));
    m_startButton->setEnabled(m_keyProblem.isEmpty());
    m_startButton->setToolTip(m_keyProblem);
}

void NewRunDialog::updateEstimate()
{
    const qint64 b = m_beamWidth->value();
    const qint64 n = m_plansPerParent->value();
    const qint64 k = m_codePerPlan->value();
    const qint64 f = m_fixAttempts->value();
    const qint64 iterations = m_iterations->value();
    const qint64 plans = b * n;
    const qint64 candidates = plans * k;
    // One call per parent each for the one-shot menu and the example choice; none for plans when they are skipped.
    const qint64 perParent = (m_oneShotMenu->isChecked() ? 1 : 0) + (m_exampleRate->value() > 0 ? 1 : 0);
    const qint64 calls = (m_skipPlanning->isChecked() ? 0 : plans) + candidates + b * perParent;
    QString text = m_skipPlanning->isChecked()
        ? tr("Per iteration: up to B×N×K = %1×%2×%3 = %4 candidates; %4 code calls (planning skipped)")
              .arg(b)
              .arg(n)
              .arg(k)
              .arg(candidates)
        : tr("Per iteration: up to B×N×K = %1×%2×%3 = %4 candidates; %5 plan + %4 code = %6 LLM calls")
              .arg(b)
              .arg(n)
              .arg(k)
              .arg(candidates)
              .arg(plans)
              .arg(plans + candidates);
    if (perParent > 0)
        text += tr(", %1 per parent for the one-shot menu and example choice (%2 in all)").arg(perParent).arg(calls);
    if (f > 0)
        text +=
            tr(", and at most F = %1 fix call(s) per candidate (%2 more)", nullptr, int(f)).arg(f).arg(candidates * f);
    text += QLatin1Char('\n');
    text += tr("%n iteration(s): up to %1 candidates and %2 LLM calls", nullptr, int(iterations))
                .arg(candidates * iterations)
                .arg(calls * iterations);
    if (f > 0)
        text += tr(" (%1 with every fix)").arg((calls + candidates * f) * iterations);
    m_estimate->setText(text);
}

bool NewRunDialog::saveYaml(const QString &path, QString *error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(config().toYaml()) < 0 || !file.commit()) {
        *error = tr("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool NewRunDialog::loadYaml(const QString &path, QStringList *errors)
{
    const std::optional<RunConfig> loaded = RunConfig::fromFile(path, errors);
    if (!loaded)
        return false;
    setConfig(*loaded);
    return true;
}

void NewRunDialog::saveYamlClicked()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Run Config"),
        QStringLiteral("%1-%2.yaml").arg(m_target->currentText(), m_problem->currentText()),
        tr("YAML files (*.yaml *.yml)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveYaml(path, &error)) {
        m_errorsLabel->setText(error);
        m_errorsLabel->show();
    }
}

void NewRunDialog::loadYamlClicked()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Load Run Config"), {},
                                                      tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty())
        return;
    QStringList errors;
    if (!loadYaml(path, &errors)) {
        m_errorsLabel->setText(errors.join(QLatin1Char('\n')));
        m_errorsLabel->show();
    }
}

void NewRunDialog::browseSchedule()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Schedule File"), {},
                                                      tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        m_schedule->setText(path);
}

} // namespace autocomp
